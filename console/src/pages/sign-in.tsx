import { useState } from 'preact/hooks';
import type { Me } from '../model.js';
import { signIn } from '../session.js';
import { Button, ErrorNote, Field, useAction } from '../ui.js';

export function SignInPage(props: { onSignedIn: (me: Me) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const me = await action.run(() => signIn(email.trim(), password));
    if (me) props.onSignedIn(me);
  };
  return (
    <main id="main" class="signin">
      <form class="signin-card" onSubmit={submit} aria-labelledby="signin-title">
        <div class="brand brand-large">
          <span class="logo" aria-hidden="true">
            M
          </span>
          Model gateway
        </div>
        <h1 id="signin-title">Sign in to the console</h1>
        <Field label="Email">
          {(id) => (
            <input id={id} type="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
          )}
        </Field>
        <Field label="Password">
          {(id) => (
            <input
              id={id}
              type="password"
              autocomplete="current-password"
              required
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
          )}
        </Field>
        <ErrorNote error={action.error} />
        <Button type="submit" variant="primary" busy={action.busy}>
          Sign in
        </Button>
        <p class="hint">The demo (`npm start`) prints its sign-in in the start-up banner.</p>
      </form>
    </main>
  );
}
