/**
 * The platform API (fitting, datasets, async tasks) and the chat adapters authenticate API keys, not
 * console sessions. Pages that call them ask for one of the account's keys and keep it in this tab's
 * memory only (never in storage): it is gone on reload, sign-out or an account switch.
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { useApp } from './app-state.js';
import { Button, Card, Field } from './ui.js';

export function NeedsKey(props: { why: string; children: ComponentChildren }) {
  const app = useApp();
  const [value, setValue] = useState('');
  if (app.workingKey) {
    return (
      <>
        <p class="keybar small">
          Calling with a key of <strong>{app.account.name}</strong> held in this tab only.{' '}
          <button type="button" class="linklike" onClick={() => app.setWorkingKey('')}>
            Forget it
          </button>
        </p>
        {props.children}
      </>
    );
  }
  return (
    <Card title="An API key for this tab">
      <form
        class="form"
        onSubmit={(e) => {
          e.preventDefault();
          app.setWorkingKey(value.trim());
        }}
      >
        <p>
          {props.why} Paste a key of <strong>{app.account.name}</strong> (create one under API tokens). The console keeps it in this tab's
          memory only: it is forgotten when you reload, switch account or sign out.
        </p>
        <Field label="API key">
          {(id) => (
            <input id={id} type="password" autocomplete="off" required value={value} onInput={(e) => setValue(e.currentTarget.value)} />
          )}
        </Field>
        <div class="form-actions">
          <Button type="submit" variant="primary">
            Use this key
          </Button>
        </div>
      </form>
    </Card>
  );
}
