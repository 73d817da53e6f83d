import { pino, type DestinationStream, type Logger } from 'pino';
import { LOG_BOUNDS, truncateText } from './log-fields.js';
import { PinoPretty } from 'pino-pretty';

export type { Logger };

/** Properties censored in any object logged one level down (`{headers: {authorization: …}}`). */
const SECRET_KEYS = [
  'authorization',
  'Authorization',
  'platform-api-key',
  'PLATFORM-API-KEY',
  'authToken',
  'connectionToken',
  'key',
] as const;
const CENSOR = '[redacted]';

/**
 * The second guard against secrets in log lines: any top-level value of a log object that is an
 * object holding one of SECRET_KEYS gets that property replaced by `[redacted]` (in a copy; the
 * caller's object is untouched). The same paths as pino's `redact: ['*.authorization', …]`, but
 * checked with a few property lookups per line: pino's wildcard redaction parses and walks its path
 * list and clones on every log call, which cost about ten microseconds per line, two thirds of a
 * log call, on the gateway's request path (one usage line per chat answer). Child-logger bindings
 * are not passed through it: the code sets them (plugin, component, service), never a request.
 */
export function censorSecrets(object: Record<string, unknown>): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  for (const name in object) {
    const value = object[name];
    // Also a bound on size: a top-level string field longer than LOG_BOUNDS.maxChars is cut
    // (code that logs outside data logs it through boundForLog; this is the backstop).
    if (typeof value === 'string' && value.length > LOG_BOUNDS.maxChars) (copy ??= { ...object })[name] = truncateText(value);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
    let censored: Record<string, unknown> | undefined;
    for (const key of SECRET_KEYS) {
      if (Object.prototype.hasOwnProperty.call(value, key)) (censored ??= { ...(value as Record<string, unknown>) })[key] = CENSOR;
    }
    if (censored) (copy ??= { ...object })[name] = censored;
  }
  return copy ?? object;
}

/**
 * Where log lines go by default: stdout, written asynchronously in batches of at least 4 KiB and at
 * least every 100 ms (and synchronously at exit). Writing each line on its own costs a trip through
 * libuv's thread pool per line, which under load was about 40 µs of CPU per chat request, more
 * than the rest of the usage line; a line now waits at most 100 ms, and a process killed with
 * SIGKILL loses at most the last 4 KiB.
 */
function stdoutDestination(): DestinationStream {
  return pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 100 });
}

export type LogFormat = 'json' | 'pretty';

/** `LOG_FORMAT` when set, else readable lines for a person at a terminal and JSON lines for everything else. */
export function logFormat(env: NodeJS.ProcessEnv = process.env, isTty = Boolean(process.stdout.isTTY)): LogFormat {
  if (env.LOG_FORMAT === 'json' || env.LOG_FORMAT === 'pretty') return env.LOG_FORMAT;
  return isTty ? 'pretty' : 'json';
}

/**
 * One line per entry for a person: time, level, message, then the fields. Formatted in this thread
 * (pino-pretty as a stream, not as a worker transport) so log lines and the start-up banner, written
 * straight to stdout, come out in the order they happened.
 */
function prettyDestination(): DestinationStream {
  return PinoPretty({
    colorize: Boolean(process.stdout.isTTY),
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname,name',
    singleLine: true,
    sync: true,
  });
}

/**
 * Structured logs: JSON lines, or readable lines at a terminal (logFormat). Secrets never reach a
 * log line: callers log key names and hashes are not logged at all; censorSecrets is a second guard
 * for headers passed whole.
 */
export function createLogger(options: { level?: string; name?: string; destination?: DestinationStream; format?: LogFormat } = {}): Logger {
  const settings = {
    name: options.name ?? 'gateway',
    level: options.level ?? process.env.LOG_LEVEL ?? 'info',
    formatters: { log: censorSecrets },
  };
  const destination = options.destination ?? ((options.format ?? logFormat()) === 'pretty' ? prettyDestination() : stdoutDestination());
  return pino(settings, destination);
}

/** A logger that drops everything; the default in tests unless LOG_LEVEL is set. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
