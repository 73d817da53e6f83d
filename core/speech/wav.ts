/** WAV (RIFF) framing for 16-bit PCM: a header for streamed output and a reader for uploaded files. */

/** The RIFF and data sizes of a stream whose length is not known yet, as streaming encoders write them. */
const UNKNOWN_SIZE = 0xffffffff;

/**
 * A 44-byte canonical WAV header for 16-bit PCM. Without `dataBytes` the sizes are 0xFFFFFFFF, which
 * players and decoders read as "until the end of the stream".
 */
export function wavHeader(sampleRate: number, channels = 1, dataBytes?: number): Buffer {
  const header = Buffer.alloc(44);
  const blockAlign = channels * 2;
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(dataBytes === undefined ? UNKNOWN_SIZE : Math.min(UNKNOWN_SIZE, 36 + dataBytes), 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * blockAlign, 28);
  header.writeUInt16LE(blockAlign, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(dataBytes === undefined ? UNKNOWN_SIZE : dataBytes, 40);
  return header;
}

export interface WavAudio {
  sampleRate: number;
  channels: number;
  /** The samples as 16-bit little-endian mono PCM (channels mixed down). */
  pcm: Buffer;
}

/** A WAV file this module cannot read; the message says why. */
export class WavFormatError extends Error {
  override readonly name = 'WavFormatError';
}

const WAVE_FORMAT_PCM = 1;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;

/**
 * The 16-bit PCM samples of a WAV file, mixed down to mono. Chunks other than `fmt ` and `data` are
 * skipped; a data size larger than the file (a streamed WAV's 0xFFFFFFFF) means "to the end".
 */
export function readWav(file: Buffer): WavAudio {
  if (file.length < 12 || file.toString('ascii', 0, 4) !== 'RIFF' || file.toString('ascii', 8, 12) !== 'WAVE') {
    throw new WavFormatError('not a WAV file (no RIFF/WAVE header)');
  }
  let format: { tag: number; channels: number; sampleRate: number; bits: number } | undefined;
  let offset = 12;
  while (offset + 8 <= file.length) {
    const id = file.toString('ascii', offset, offset + 4);
    const size = file.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      if (size < 16 || body + 16 > file.length) throw new WavFormatError('the fmt chunk is truncated');
      let tag = file.readUInt16LE(body);
      // WAVE_FORMAT_EXTENSIBLE names the real format in the first two bytes of its sub-format GUID.
      if (tag === WAVE_FORMAT_EXTENSIBLE && size >= 40 && body + 26 <= file.length) tag = file.readUInt16LE(body + 24);
      format = { tag, channels: file.readUInt16LE(body + 2), sampleRate: file.readUInt32LE(body + 4), bits: file.readUInt16LE(body + 14) };
    } else if (id === 'data') {
      if (!format) throw new WavFormatError('the data chunk comes before the fmt chunk');
      if (format.tag !== WAVE_FORMAT_PCM) throw new WavFormatError(`WAV format tag ${format.tag} is not PCM; send 16-bit PCM`);
      if (format.bits !== 16) throw new WavFormatError(`${format.bits}-bit samples are not supported; send 16-bit PCM`);
      if (format.channels < 1) throw new WavFormatError('the fmt chunk declares no channels');
      if (format.sampleRate <= 0) throw new WavFormatError('the fmt chunk declares no sample rate');
      const end = Math.min(file.length, body + size);
      return { sampleRate: format.sampleRate, channels: format.channels, pcm: mixDown(file.subarray(body, end), format.channels) };
    }
    // Chunks are padded to an even size.
    offset = body + size + (size % 2);
  }
  throw new WavFormatError(format ? 'the WAV file has no data chunk' : 'the WAV file has no fmt chunk');
}

/** Interleaved 16-bit frames averaged to one channel; whole frames only. */
function mixDown(data: Buffer, channels: number): Buffer {
  const frameBytes = channels * 2;
  const frames = Math.floor(data.length / frameBytes);
  if (channels === 1) return data.subarray(0, frames * 2);
  const out = Buffer.alloc(frames * 2);
  for (let f = 0; f < frames; f++) {
    let sum = 0;
    for (let c = 0; c < channels; c++) sum += data.readInt16LE(f * frameBytes + c * 2);
    out.writeInt16LE(Math.round(sum / channels), f * 2);
  }
  return out;
}
