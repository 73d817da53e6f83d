/** What every page shares: the signed-in user, the session's current account, navigation. */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Me, Membership } from './model.js';

export interface AppState {
  me: Me;
  /** The session's current account: the one the pages show, and the platform and chat calls act for. */
  account: Membership;
  /** Makes another account the session's current one (a call to the server), then shows it. */
  setAccount(name: string): Promise<void>;
  navigate(page: string): void;
  signOut(): Promise<void>;
  refreshMe(): Promise<void>;
}

export const AppContext = createContext<AppState | null>(null);

export function useApp(): AppState {
  const state = useContext(AppContext);
  if (!state) throw new Error('useApp outside the signed-in console');
  return state;
}

/** Roles in order of what they may do. */
const RANK = { viewer: 0, developer: 1, owner: 2 } as const;
export function canAct(state: AppState, needed: keyof typeof RANK): boolean {
  return state.me.user.operator || (state.account.role !== 'operator' && RANK[state.account.role] >= RANK[needed]);
}
