import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs. Secrets never reach a log line: callers log key names and hashes are not
 * logged at all; the redact list is a second guard for headers passed whole.
 */
export function createLogger(options: { level?: string; name?: string } = {}): Logger {
  return pino({
    name: options.name ?? 'gateway',
    level: options.level ?? process.env.LOG_LEVEL ?? 'info',
    redact: {
      paths: ['*.authorization', '*.Authorization', '*["platform-api-key"]', '*["PLATFORM-API-KEY"]', '*.authToken', '*.connectionToken', '*.key'],
      censor: '[redacted]',
    },
  });
}

/** A logger that drops everything; the default in tests unless LOG_LEVEL is set. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
