import { useEffect, useRef, useState } from 'react';
import { api } from './api';

/**
 * A destructive action asked twice, in place: the first press shows the question with the real button and
 * Cancel (focus moves to Cancel, so a second Enter does not confirm by accident); Escape cancels.
 */
export function ConfirmButton({
  label,
  confirmLabel,
  question,
  onConfirm,
  disabled,
}: {
  label: string;
  confirmLabel: string;
  question: string;
  onConfirm: () => void | Promise<void>;
  disabled?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const cancel = useRef<HTMLButtonElement>(null);
  const first = useRef<HTMLButtonElement>(null);
  const wasAsking = useRef(false);
  useEffect(() => {
    if (asking) cancel.current?.focus();
    else if (wasAsking.current) first.current?.focus();
    wasAsking.current = asking;
  }, [asking]);
  if (!asking) {
    return (
      <button type="button" ref={first} className="button danger-quiet" onClick={() => setAsking(true)} disabled={disabled}>
        {label}
      </button>
    );
  }
  return (
    <fieldset
      className="confirm"
      onKeyDown={(e) => {
        if (e.key === 'Escape') setAsking(false);
      }}
    >
      <legend className="visually-hidden">{confirmLabel}</legend>
      <span className="confirm-question">{question}</span>
      <button
        type="button"
        className="button danger"
        disabled={disabled}
        onClick={async () => {
          await onConfirm();
          setAsking(false);
        }}
      >
        {confirmLabel}
      </button>
      <button type="button" ref={cancel} className="button secondary" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </fieldset>
  );
}

/**
 * A ConfirmButton whose confirmation DELETEs `path` through the page's action (its busy state and error) and then
 * runs `after` (reading the list again): removing a person, withdrawing an invitation, revoking a token, deleting a hook.
 */
export function ConfirmDelete({
  path,
  action,
  after,
  ...button
}: {
  label: string;
  confirmLabel: string;
  question: string;
  path: string;
  action: { busy: boolean; run: (fn: () => Promise<void>) => Promise<void> };
  after: () => void | Promise<void>;
}) {
  return (
    <ConfirmButton
      {...button}
      disabled={action.busy}
      onConfirm={() =>
        action.run(async () => {
          await api('DELETE', path);
          await after();
        })
      }
    />
  );
}
