/**
 * The logger the SDK writes to: pino-compatible (`log.warn({ gate }, 'text')`) and console-compatible
 * (console prints the object, then the text). Method syntax keeps pino's overloads assignable.
 */
export interface SdkLogger {
  debug(...args: unknown[]): void;
  info(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}

const noop = (): void => {};

/** Drops everything. */
export const silentLogger: SdkLogger = { debug: noop, info: noop, warn: noop, error: noop };

/**
 * One line per entry, for a person: `[model-sdk] <text>`. The text already says what matters; the
 * fields (for structured loggers) are left out, an error's first line excepted.
 */
function line(args: unknown[]): string {
  const text = args
    .filter((a): a is string => typeof a === 'string')
    .join(' ')
    .replace(/^model-sdk: /, '');
  const fields = args.find((a): a is Record<string, unknown> => typeof a === 'object' && a !== null);
  const err = fields?.err instanceof Error ? fields.err.message.split('\n')[0] : undefined;
  return `[model-sdk] ${text}${err && !text.includes(err) ? `: ${err}` : ''}`;
}

/**
 * The default: connects, disconnects, warnings and errors to the console, one line each (the
 * Python SDK's default level is WARN; a service run by hand also wants to see that it connected).
 */
export function consoleLogger(): SdkLogger {
  return {
    debug: noop,
    info: (...args: unknown[]) => console.log(line(args)),
    warn: (...args: unknown[]) => console.warn(line(args)),
    error: (...args: unknown[]) => console.error(line(args)),
  };
}
