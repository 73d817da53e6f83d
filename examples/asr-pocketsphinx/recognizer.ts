import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const RECOGNIZER_SCRIPT = fileURLToPath(new URL('./recognizer.py', import.meta.url));

/** One line of recognizer.py's output. */
export type RecognizerEvent =
  | { type: 'partial'; text: string }
  | { type: 'final'; text: string; confidence: number; words: { word: string; start: number; end: number; confidence: number }[] }
  | { type: 'error'; message: string };

export interface RecognizerOptions {
  /** Python with the pocketsphinx bindings (Debian: python3-pocketsphinx). */
  python: string;
  modelDir?: string;
  partial: boolean;
  /** Recognize only these phrases (a JSGF grammar of alternatives). */
  phrases?: string[];
  /** A JSGF grammar, as text. */
  jsgf?: string;
  signal?: AbortSignal;
}

/** A recognizer argument the recognizer refused (unknown words, a bad grammar): a bad request. */
export class RecognizerInputError extends Error {
  override readonly name = 'RecognizerInputError';
}

/** Whether `python` can import the pocketsphinx bindings; the reason when it cannot. */
export function checkPocketsphinx(python: string): { ok: true } | { ok: false; reason: string } {
  const run = spawnSync(python, ['-c', 'import pocketsphinx'], { encoding: 'utf8', timeout: 30_000 });
  if (run.error) return { ok: false, reason: `${python} does not run: ${run.error.message}` };
  if (run.status !== 0) return { ok: false, reason: `${python} cannot import pocketsphinx: ${run.stderr.trim().split('\n').pop() ?? ''}` };
  return { ok: true };
}

/**
 * One streaming recognition in a recognizer.py process: `write` 16 kHz PCM (resolves when the pipe
 * takes more, so a fast producer waits), `end` it, and iterate `events` for results as they come.
 */
export class Recognizer {
  readonly #child;
  readonly #stderr: string[] = [];
  readonly #exited: Promise<number | null>;
  #inputError: string | undefined;

  constructor(options: RecognizerOptions) {
    const args = [RECOGNIZER_SCRIPT];
    if (options.modelDir) args.push('--model-dir', options.modelDir);
    if (options.partial) args.push('--partial');
    if (options.phrases) args.push('--phrases', JSON.stringify(options.phrases));
    else if (options.jsgf) args.push('--jsgf', options.jsgf);
    this.#child = spawn(options.python, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    this.#child.stdin.on('error', () => {}); // the recognizer may exit first (bad grammar, cancel)
    this.#child.stderr.setEncoding('utf8').on('data', (s: string) => this.#stderr.push(s));
    this.#exited = new Promise((resolve) => {
      this.#child.once('error', (err) => {
        this.#stderr.push(err.message);
        resolve(null);
      });
      this.#child.once('close', (code) => resolve(code));
    });
    options.signal?.addEventListener('abort', () => this.kill(), { once: true });
  }

  async write(pcm: Buffer): Promise<void> {
    if (pcm.length === 0 || this.#child.stdin.destroyed) return;
    if (!this.#child.stdin.write(pcm)) {
      await Promise.race([once(this.#child.stdin, 'drain'), this.#exited]);
    }
  }

  end(): void {
    if (!this.#child.stdin.destroyed) this.#child.stdin.end();
  }

  kill(): void {
    if (this.#child.exitCode === null) this.#child.kill('SIGKILL');
  }

  /** Results until the recognizer exits; throws when it failed. */
  async *events(): AsyncGenerator<Exclude<RecognizerEvent, { type: 'error' }>> {
    const lines = createInterface({ input: this.#child.stdout, crlfDelay: Infinity });
    for await (const line of lines) {
      if (!line.trim()) continue;
      const event = JSON.parse(line) as RecognizerEvent;
      if (event.type === 'error') {
        this.#inputError = event.message;
        continue;
      }
      yield event;
    }
    const code = await this.#exited;
    if (this.#inputError) throw new RecognizerInputError(this.#inputError);
    if (code !== 0 && code !== null) throw new Error(`recognizer exited with ${code}: ${this.#stderr.join('').trim().slice(-500)}`);
  }
}
