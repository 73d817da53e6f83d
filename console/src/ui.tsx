/** The console's building blocks: page frame, buttons, fields, tables, notices, dialogs. */
import type { ButtonHTMLAttributes, ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';

export function Page(props: { title: string; description?: string; actions?: ComponentChildren; children: ComponentChildren }) {
  return (
    <section class="page" aria-labelledby="page-title">
      <header class="page-header">
        <div>
          <h1 id="page-title">{props.title}</h1>
          {props.description && <p class="muted">{props.description}</p>}
        </div>
        {props.actions && <div class="page-actions">{props.actions}</div>}
      </header>
      {props.children}
    </section>
  );
}

export function Card(props: { title?: string; children: ComponentChildren; class?: string }) {
  return (
    <section class={`card ${props.class ?? ''}`} aria-label={props.title}>
      {props.title && <h2 class="card-title">{props.title}</h2>}
      {props.children}
    </section>
  );
}

type ButtonProps = ButtonHTMLAttributes<HTMLButtonElement> & { variant?: 'primary' | 'danger' | 'ghost'; busy?: boolean };
export function Button({ variant, busy, children, ...rest }: ButtonProps) {
  return (
    <button
      type="button"
      {...rest}
      class={`btn ${variant ? `btn-${variant}` : ''}`}
      disabled={Boolean(rest.disabled) || busy}
      aria-busy={busy ? 'true' : undefined}
    >
      {children}
    </button>
  );
}

let fieldCount = 0;
/** A label and its control; `children` gets the control's id. */
export function Field(props: { label: string; hint?: string; children: (id: string) => ComponentChildren }) {
  const id = useRef(`f${++fieldCount}`).current;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.children(id)}
      {props.hint && <p class="hint">{props.hint}</p>}
    </div>
  );
}

export function Badge(props: { tone?: 'ok' | 'warn' | 'bad' | 'info' | 'neutral'; children: ComponentChildren }) {
  return <span class={`badge badge-${props.tone ?? 'neutral'}`}>{props.children}</span>;
}

export function ErrorNote(props: { error: unknown }) {
  if (!props.error) return null;
  const error = props.error as Error;
  return (
    <div class="notice notice-bad" role="alert">
      {error instanceof ApiError ? <strong>{error.code}: </strong> : null}
      {error.message}
    </div>
  );
}

export function Empty(props: { children: ComponentChildren }) {
  return <p class="empty">{props.children}</p>;
}

export function Loading() {
  return (
    <p class="muted" role="status">
      Loading…
    </p>
  );
}

/** A copy button with a fallback that selects the text where the clipboard is not allowed. */
export function CopyButton(props: { text: string; label?: string; target?: () => HTMLElement | null }) {
  const [done, setDone] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.text);
      setDone('Copied');
    } catch {
      const node = props.target?.();
      if (node) window.getSelection()?.selectAllChildren(node);
      setDone('Selected: press Ctrl+C');
    }
    setTimeout(() => setDone(''), 2500);
  };
  return (
    <Button onClick={copy} aria-label={props.label ?? 'Copy'}>
      {done || 'Copy'}
    </Button>
  );
}

/** A modal dialog (the native `<dialog>`: focus trap and Escape for free). */
export function Dialog(props: { title: string; open: boolean; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (props.open && !dialog.open) dialog.showModal();
    if (!props.open && dialog.open) dialog.close();
  }, [props.open]);
  return (
    <dialog ref={ref} class="dialog" aria-labelledby="dialog-title" onClose={props.onClose}>
      <header class="dialog-header">
        <h2 id="dialog-title">{props.title}</h2>
        <button type="button" class="btn btn-ghost" onClick={props.onClose} aria-label="Close">
          ✕
        </button>
      </header>
      {props.open && props.children}
    </dialog>
  );
}

/** Data that loads once and again on `reload()` (or every `pollMs`). */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], pollMs = 0) {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    const run = () =>
      load().then(
        (data) => live && setState({ data, loading: false }),
        (error: unknown) => live && setState({ error, loading: false }),
      );
    void run();
    const timer = pollMs ? setInterval(run, pollMs) : undefined;
    return () => {
      live = false;
      if (timer) clearInterval(timer);
    };
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((n) => n + 1) };
}

/** Runs an action, keeping its busy flag and error for the form that started it. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = async <T,>(action: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await action();
    } catch (err) {
      setError(err);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, setError };
}

/** A secret shown once (an API key, a connection token): kept in this component only until dismissed. */
export function SecretOnce(props: { title: string; secret: string; onDone: () => void; children: ComponentChildren }) {
  const code = useRef<HTMLElement>(null);
  return (
    <div class="notice notice-ok secret" role="status" aria-live="polite">
      <h2>{props.title}</h2>
      <p>{props.children}</p>
      <div class="secret-row">
        <code ref={code} class="secret-value" data-testid="secret">
          {props.secret}
        </code>
        <CopyButton text={props.secret} label="Copy the secret" target={() => code.current} />
      </div>
      <Button variant="primary" onClick={props.onDone}>
        I have saved it
      </Button>
    </div>
  );
}
