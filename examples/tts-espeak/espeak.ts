import { spawn } from 'node:child_process';

/** Raised when espeak-ng refuses the request itself (an unknown voice); the service answers 400. */
export class EspeakInputError extends Error {
  override readonly name = 'EspeakInputError';
}

export interface EspeakOptions {
  /** The espeak-ng executable. */
  binary: string;
  /** An espeak-ng voice, optionally with a variant: `en-us`, `en-gb+f3`. */
  voice: string;
  signal?: AbortSignal;
}

/** The sample format of espeak-ng's output, from its WAV header. */
export interface PcmFormat {
  sampleRate: number;
  channels: number;
}

/**
 * Speaks `text` with espeak-ng and yields its audio as it is produced: first the format read from the
 * WAV header that `--stdout` writes up front, then raw 16-bit PCM pieces. espeak-ng writes to the pipe
 * while it synthesizes, so the first pieces come long before the text is spoken to the end; reading
 * is pulled, so a slow consumer blocks espeak-ng on its pipe instead of piling audio up in memory.
 */
export async function* speak(text: string, options: EspeakOptions): AsyncGenerator<PcmFormat | Buffer> {
  // Text on stdin, never as an argument: nothing in it can be taken for an option.
  const child = spawn(options.binary, ['--stdout', '-b', '1', '-v', options.voice], { stdio: ['pipe', 'pipe', 'pipe'] });
  const kill = () => child.kill('SIGKILL');
  options.signal?.addEventListener('abort', kill, { once: true });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code));
  });
  exited.catch(() => {}); // observed below; a spawn failure also ends the stdout loop
  child.stdin.on('error', () => {}); // espeak-ng may exit before reading (bad voice)
  child.stdin.end(text, 'utf8');

  let header: Buffer | undefined = Buffer.alloc(0);
  try {
    for await (const piece of child.stdout as AsyncIterable<Buffer>) {
      if (header === undefined) {
        yield piece;
        continue;
      }
      header = Buffer.concat([header, piece]);
      const parsed = parseWavHeader(header);
      if (!parsed) continue;
      yield parsed.format;
      const rest = header.subarray(parsed.dataOffset);
      header = undefined;
      if (rest.length > 0) yield rest;
    }
    const code = await exited;
    if (options.signal?.aborted) return;
    if (code !== 0) {
      const reason = stderr.trim() || `espeak-ng exited with ${code}`;
      if (/voice/i.test(reason)) throw new EspeakInputError(`voice '${options.voice}': ${reason}`);
      throw new Error(reason);
    }
    if (header !== undefined) throw new Error('espeak-ng wrote no WAV header');
  } finally {
    options.signal?.removeEventListener('abort', kill);
    if (child.exitCode === null) kill();
  }
}

/**
 * The format and the offset of the samples in a WAV stream's first bytes; undefined until the `data`
 * chunk header has arrived. espeak-ng writes the 44-byte canonical header, but other chunks are
 * skipped all the same.
 */
export function parseWavHeader(bytes: Buffer): { format: PcmFormat; dataOffset: number } | undefined {
  if (bytes.length < 12) return undefined;
  if (bytes.toString('ascii', 0, 4) !== 'RIFF' || bytes.toString('ascii', 8, 12) !== 'WAVE') {
    throw new Error('espeak-ng output is not WAV');
  }
  let format: PcmFormat | undefined;
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = bytes.toString('ascii', offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    if (id === 'data') {
      if (!format) throw new Error('espeak-ng output has no fmt chunk before its data');
      return { format, dataOffset: offset + 8 };
    }
    if (offset + 8 + size > bytes.length) return undefined;
    if (id === 'fmt ') {
      const bits = bytes.readUInt16LE(offset + 22);
      if (bytes.readUInt16LE(offset + 8) !== 1 || bits !== 16) throw new Error(`espeak-ng output is not 16-bit PCM (${bits} bits)`);
      format = { channels: bytes.readUInt16LE(offset + 10), sampleRate: bytes.readUInt32LE(offset + 12) };
    }
    offset += 8 + size + (size % 2);
  }
  return undefined;
}
