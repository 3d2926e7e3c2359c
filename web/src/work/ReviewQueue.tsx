import { memo, useEffect } from 'react';
import type { Verb } from './ReviewDetail';
import type { ReviewCard } from './review-model';

interface RowProps {
  card: ReviewCard;
  selected: boolean;
  expanded: boolean;
  /** The trust ladder's time left in words, or null. */
  ladder: string | null;
  register: (id: string, el: HTMLButtonElement | null) => void;
  onSelect: (id: string) => void;
  onOpen: (id: string) => void;
}

/**
 * One row of the desk's queue. Memoized on its own props, which name no position: a key, an action or a card
 * leaving redraws the rows whose card, selection or opening changed, not the whole queue of up to 100.
 */
export const QueueRow = memo(function QueueRow({ card, selected, expanded, ladder, register, onSelect, onOpen }: RowProps) {
  return (
    <li className={selected ? 'queue-item selected' : 'queue-item'}>
      <button
        type="button"
        className="queue-open"
        data-card-id={card.id}
        aria-current={selected ? 'true' : undefined}
        aria-expanded={expanded}
        ref={(el) => register(card.id, el)}
        onFocus={() => onSelect(card.id)}
        onClick={() => onOpen(card.id)}
      >
        <span className="queue-title">{card.title}</span>
        <span className="queue-meta">
          <span className="badge">{card.status === 'needs_revision' ? 'Revising' : card.sourceType.replace(/_/g, ' ')}</span>
          {ladder ? <span className="badge warn">{ladder}</span> : null}
        </span>
      </button>
    </li>
  );
});

interface Keys {
  list: ReviewCard[];
  index: number;
  /** The card the verb keys act on: the open one, else the selected one. */
  target: ReviewCard | null;
  openId: string | null;
  form: Verb | null;
  help: boolean;
  setHelp: (f: (h: boolean) => boolean) => void;
  setForm: (f: Verb | null) => void;
  setOpenId: (id: string | null) => void;
  setSelected: (i: number) => void;
  focusCard: (id: string | undefined) => void;
  runPrimary: (card: ReviewCard) => Promise<void>;
}

/** The desk's keys: j/k next/previous, Enter open, e or Shift+Enter the primary action, r/s/d the verbs, ? help. */
export function useDeskKeys({
  list,
  index,
  target,
  openId,
  form,
  help,
  setHelp,
  setForm,
  setOpenId,
  setSelected,
  focusCard,
  runPrimary,
}: Keys) {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement | null;
      if (t && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName))) {
        if (e.key === 'Escape') setForm(null);
        return;
      }
      if (e.metaKey || e.ctrlKey || e.altKey) return;
      const key = e.key;
      if (key === 'Escape') {
        if (help) setHelp(() => false);
        else if (form) setForm(null);
        else if (openId) {
          setOpenId(null);
          focusCard(openId);
        }
        return;
      }
      if (key === '?') {
        e.preventDefault();
        setHelp((h) => !h);
        return;
      }
      if (!list.length) return;
      if (key === 'j' || key === 'k') {
        e.preventDefault();
        const next = Math.max(0, Math.min(list.length - 1, index + (key === 'j' ? 1 : -1)));
        setSelected(next);
        if (openId) setOpenId(list[next]!.id);
        setForm(null);
        focusCard(list[next]!.id);
        return;
      }
      if (!target) return;
      if (key === 'Enter' && e.shiftKey) {
        e.preventDefault();
        void runPrimary(target);
      } else if (key === 'Enter') {
        // On a button, Enter is the button's own; on the list it opens the card.
        if (t?.tagName === 'BUTTON' && !t.dataset.cardId) return;
        e.preventDefault();
        setOpenId(target.id);
        setForm(null);
      } else if (key === 'e') {
        e.preventDefault();
        void runPrimary(target);
      } else if (key === 'r' && target.actions.includes('request_changes')) {
        e.preventDefault();
        setOpenId(target.id);
        setForm('request_changes');
      } else if (key === 's' && target.actions.includes('snooze')) {
        e.preventDefault();
        setOpenId(target.id);
        setForm('snooze');
      } else if (key === 'd' && target.actions.includes('dismiss')) {
        e.preventDefault();
        setOpenId(target.id);
        setForm('dismiss');
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [list, index, target, openId, form, help, focusCard, runPrimary, setSelected, setOpenId, setHelp, setForm]);
}
