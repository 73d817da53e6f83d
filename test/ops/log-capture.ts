import { createLogger, type Logger } from '../../core/observe/logger.js';

/** A real pino logger at `level` (default `info`) whose JSON lines are kept in memory for assertions. */
export function capturingLogger(level = 'info'): { logger: Logger; lines: Record<string, any>[]; text: () => string } {
  const raw: string[] = [];
  const logger = createLogger({ level, destination: { write: (line: string) => void raw.push(line) } });
  return {
    logger,
    get lines() {
      return raw.map((line) => JSON.parse(line) as Record<string, any>);
    },
    text: () => raw.join(''),
  };
}
