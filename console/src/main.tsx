/** The console's entry: sign-in, then the shell (top bar, account switcher, navigation) around a page. */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { AppContext, type AppState } from './app-state.js';
import { call, CORE, items, onSessionEnded } from './api.js';
import type { Account, Me, Membership } from './model.js';
import { AccountsPage } from './pages/accounts.js';
import { FittedPage } from './pages/fitted.js';
import { KeysPage } from './pages/keys.js';
import { MembersPage } from './pages/members.js';
import { PlaygroundPage } from './pages/playground.js';
import { ServicesPage } from './pages/services.js';
import { SessionsPage } from './pages/sessions.js';
import { SignInPage } from './pages/sign-in.js';
import { TasksPage } from './pages/tasks.js';
import { UsagePage } from './pages/usage.js';
import { announceSessionChange, currentUser, onSessionChangedElsewhere, signOut, switchAccount } from './session.js';
import { ErrorNote, Loading } from './ui.js';

const BASE = '/console/';

interface PageEntry {
  id: string;
  label: string;
  view: () => preact.JSX.Element;
  operator?: boolean;
}
const PAGES: PageEntry[] = [
  { id: 'keys', label: 'API tokens', view: KeysPage },
  { id: 'services', label: 'Services', view: ServicesPage },
  { id: 'fitted', label: 'Fitted services', view: FittedPage },
  { id: 'tasks', label: 'Async tasks', view: TasksPage },
  { id: 'usage', label: 'Usage and spend', view: UsagePage },
  { id: 'playground', label: 'Playground', view: PlaygroundPage },
  { id: 'members', label: 'Members', view: MembersPage },
  { id: 'accounts', label: 'Accounts', view: AccountsPage, operator: true },
  { id: 'sessions', label: 'Sessions', view: SessionsPage },
];

const pageFromPath = () => location.pathname.slice(BASE.length).split('/')[0] || 'keys';

function App() {
  const [me, setMe] = useState<Me | undefined | null>(null);
  const [error, setError] = useState<unknown>();
  const [page, setPage] = useState(pageFromPath());
  const [switchError, setSwitchError] = useState<unknown>();
  // One switch at a time: the answers of two could arrive out of order.
  const [switching, setSwitching] = useState(false);

  // An operator may switch to every account, not only those it is a member of.
  const [operatorAccounts, setOperatorAccounts] = useState<Account[]>([]);
  const refreshMe = async () => {
    let who = await currentUser();
    const every = who?.user.operator ? items<Account>(await call(`${CORE}/accounts`)) : [];
    // A session acting for no account it may reach (none yet, or a membership that ended) takes the first it may.
    const names = [...(who?.accounts ?? []), ...every].map((a) => a.name);
    if (who && names.length && !names.includes(who.current ?? '')) who = await switchAccount(names[0]!);
    setOperatorAccounts(every);
    setMe(who);
  };
  useEffect(() => {
    refreshMe().catch(setError);
    // An expired session (or one ended from another browser) goes back to the sign-in.
    onSessionEnded(() => setMe(undefined));
    // Another tab signed in, switched account or signed out: this one shows the session as it is now.
    onSessionChangedElsewhere(() => void refreshMe().catch(setError));
    const onPop = () => setPage(pageFromPath());
    addEventListener('popstate', onPop);
    return () => removeEventListener('popstate', onPop);
  }, []);

  if (error) return <ErrorNote error={error} />;
  if (me === null) return <Loading />;
  if (!me)
    return (
      <SignInPage
        onSignedIn={() => {
          announceSessionChange();
          void refreshMe().catch(setError);
        }}
      />
    );

  const reachable: Membership[] = [
    ...me.accounts.map((m) => ({ ...m, blocked: operatorAccounts.find((a) => a.id === m.id)?.blocked ?? m.blocked })),
    ...operatorAccounts
      .filter((a) => !me.accounts.some((m) => m.id === a.id))
      .map((a) => ({ id: a.id, name: a.name, displayName: a.displayName, role: 'operator' as const, blocked: a.blocked })),
  ];
  // The server keeps the session's current account: what the platform and chat calls act for.
  const account = reachable.find((a) => a.name === me.current);
  const setAccount = async (name: string) => {
    setSwitchError(undefined);
    setSwitching(true);
    try {
      setMe(await switchAccount(name));
      announceSessionChange();
    } catch (err) {
      setSwitchError(err);
    } finally {
      setSwitching(false);
    }
  };
  const state: AppState | undefined = account && {
    me,
    account,
    setAccount,
    navigate(next) {
      history.pushState(null, '', `${BASE}${next}`);
      setPage(next);
    },
    async signOut() {
      await signOut();
      announceSessionChange();
      setMe(undefined);
      history.pushState(null, '', BASE);
      setPage(pageFromPath());
    },
    refreshMe,
  };
  const signedOut = () => {
    announceSessionChange();
    setMe(undefined);
  };
  if (!state || !account) return <NoAccount me={me} onSignOut={() => signOut().then(signedOut)} />;
  const visible = PAGES.filter((p) => !p.operator || me.user.operator);
  const current = visible.find((p) => p.id === page) ?? visible[0]!;
  const View = current.view;
  document.title = `${current.label} · Console`;

  return (
    <AppContext.Provider value={state}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <span class="brand" aria-label="Model gateway console">
          <span class="logo" aria-hidden="true">
            M
          </span>
          Model gateway
        </span>
        <div class="topbar-right">
          <label class="switcher">
            <span>Account</span>
            <select
              value={account.name}
              disabled={switching}
              onChange={(e) => void state.setAccount(e.currentTarget.value)}
              aria-label="Account"
            >
              {reachable.map((a) => (
                <option value={a.name} key={a.name}>
                  {a.displayName || a.name} ({a.role})
                </option>
              ))}
            </select>
          </label>
          <span class="who" title={me.user.email}>
            {me.user.email}
            {me.user.operator && <span class="badge badge-info">operator</span>}
          </span>
          <button type="button" class="btn btn-ghost" onClick={() => void state.signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <div class="layout">
        <nav class="sidebar" aria-label="Console">
          <ul>
            {visible.map((p) => (
              <li key={p.id}>
                <a
                  href={`${BASE}${p.id}`}
                  aria-current={p.id === current.id ? 'page' : undefined}
                  onClick={(e) => {
                    e.preventDefault();
                    state.navigate(p.id);
                  }}
                >
                  {p.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main" class="content" key={`${current.id}:${account.name}`}>
          <ErrorNote error={switchError} />
          {account.blocked && (
            <div class="notice notice-bad" role="alert">
              This account is blocked: its model calls answer 402 ACCOUNT_BLOCKED.
            </div>
          )}
          <View />
        </main>
      </div>
    </AppContext.Provider>
  );
}

function NoAccount(props: { me: Me; onSignOut: () => void }) {
  return (
    <main id="main" class="signin">
      <div class="signin-card">
        <h1>No account yet</h1>
        <p>{props.me.user.email} is not a member of any account. Ask an account owner to add you.</p>
        <button type="button" class="btn" onClick={props.onSignOut}>
          Sign out
        </button>
      </div>
    </main>
  );
}

render(<App />, document.getElementById('app')!);
