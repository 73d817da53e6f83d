/** What the console reads from the API (fields it does not use are left out). */

export type Role = 'owner' | 'developer' | 'viewer';
export type Permission = 'MODEL_REQUESTS' | 'READ_DATA' | 'MODIFY_DATA' | 'MANAGE';
export const PERMISSIONS: { id: Permission; label: string; hint: string }[] = [
  { id: 'MODEL_REQUESTS', label: 'Model requests', hint: 'call models: predict, chat, async tasks' },
  { id: 'READ_DATA', label: 'Read data', hint: 'read tasks, datasets, jobs, usage' },
  { id: 'MODIFY_DATA', label: 'Modify data', hint: 'upload datasets, start fits, cancel tasks' },
  { id: 'MANAGE', label: 'Manage', hint: 'the user-space API: keys, services, members' },
];

export interface Budget {
  unit: 'tokens' | 'money';
  limit: number;
  period: 'day' | 'month' | 'total';
}

export interface Membership {
  id: number;
  name: string;
  displayName?: string;
  /** `operator`: an account the operator reaches without being one of its members. */
  role: Role | 'operator';
  blocked?: boolean;
}

export interface Me {
  user: { id: string; email: string; operator: boolean };
  csrf: string;
  accounts: Membership[];
  /** The name of the session's current account (none yet: undefined). */
  current?: string;
}

export interface ApiKey {
  id: string;
  name: string;
  prefix?: string;
  permissions: Permission[];
  services?: (number | string)[];
  expiresAt?: string | number | null;
  requestsPerSecond?: number | null;
  budgets?: Budget[];
  createdAt?: string | number;
  revokedAt?: string | number | null;
  /** The old secret of a rotation works until then. */
  previousKeyValidUntil?: string | number | null;
  source?: 'config' | 'stored';
  /** Only in the answer that created or rotated the key. */
  key?: string;
}

export interface Service {
  id: number;
  name: string;
  account?: string;
  public?: boolean;
  family?: string;
  defaultModel?: string;
  aliases?: string[];
  fittable?: boolean;
  /** `stored`: made through the API (editable); `config`: the config file; `derived`: a fitted service. */
  source?: 'config' | 'stored' | 'derived';
  /** Serving instances connected to this gateway. */
  instances?: number;
  /** Every instance live on this gateway: version, load, state; an upstream engine with its health. */
  connectedInstances?: ServiceInstance[];
  connectionTokens?: { id: string; prefix?: string; createdAt?: string }[];
  upstream?: {
    api?: string;
    baseUrl?: string;
    defaultModel?: string;
    models?: Record<string, string>;
    apiKeySet?: boolean;
    [field: string]: unknown;
  };
  base?: { id: number; name: string | null; fitted: boolean };
  registryModel?: { provider: string; name: string; displayName: string } | null;
  /** Only in the answer that made a new connection token: its secret, shown once. */
  connectionToken?: { id: string; token: string };
  [field: string]: unknown;
}

/** One instance of a service as the services API shows it. */
export interface ServiceInstance {
  name: string;
  kind: 'stream' | 'local';
  state: 'serving' | 'draining' | 'closed';
  hostname: string | null;
  version: number | null;
  image: string | null;
  inFlight: number;
  load: { inFlight?: number; queueDepth?: number; kvCacheUsage?: number; models?: string[]; at: string } | null;
  connectedAt: string;
  engineHealth?: { status: 'healthy' | 'unhealthy' | 'pending' | 'unchecked'; consecutiveFailures: number; checkedAt: string | null };
}

export interface UsageRow {
  day?: string;
  model?: string;
  key?: string;
  keyName?: string;
  service?: string;
  requests: number;
  inputTokens: number;
  outputTokens: number;
  cost?: number;
  currency?: string | null;
}

export interface Member {
  userId: string;
  email: string;
  role: Role;
}

export interface Account {
  id: number;
  name: string;
  displayName?: string;
  blocked?: boolean;
  requestsPerSecond?: number;
  /** Its own input rate, bytes a second; null: the gateway's default. */
  inputBytesPerSecond?: number | null;
  source?: 'config' | 'stored';
  budgets?: Budget[];
}

export interface Session {
  id: string;
  current?: boolean;
  createdAt?: string | number;
  lastSeenAt?: string | number;
  expiresAt?: string | number;
  userAgent?: string;
}

export interface DerivedService {
  id: { accountId: number; modelId: number };
  name: string;
  description?: string;
  baseService: { name: string; accountName: string };
  fitted: boolean;
  fittedAt: number | null;
  createdAt: number;
}

export interface Dataset {
  id: { accountId: number; datasetId: number };
  name: string;
  description?: string;
  dataType: string;
  size: number;
  createdAt: number;
}

export interface FitJob {
  jobId: number | string;
  status: 'PENDING' | 'RUNNING' | 'SUCCESS' | 'FAILED' | 'CANCELED';
  percentage: number;
  done: boolean;
  error: boolean;
  errorMessage?: string | null;
  service?: { name: string } | null;
  datasetId?: number;
  createdAt?: number;
  [field: string]: unknown;
}

export interface FitConfig {
  id: { configId: number };
  name: string;
  isDefault: boolean;
}

export interface TaskStatus {
  taskId: string;
  status: string;
  createdAt: number;
  completedAt: number | null;
}
