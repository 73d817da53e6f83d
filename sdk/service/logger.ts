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

/** The default: warnings and errors to the console (the Python SDK's default level is WARN). */
export function consoleLogger(): SdkLogger {
  return {
    debug: noop,
    info: noop,
    warn: (...args: unknown[]) => console.warn('[model-sdk]', ...args),
    error: (...args: unknown[]) => console.error('[model-sdk]', ...args),
  };
}
