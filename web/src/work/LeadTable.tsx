/** A lead's tags as small labels. */
export function Tags({ tags }: { tags: readonly string[] }) {
  return (
    <ul className="tags">
      {tags.map((t) => (
        <li key={t} className="tag">
          {t}
        </li>
      ))}
    </ul>
  );
}
