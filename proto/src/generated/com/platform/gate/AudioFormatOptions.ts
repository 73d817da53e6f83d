// Original file: gate.proto

import type { Long } from '@grpc/proto-loader';

// Original file: gate.proto

export const _com_platform_gate_AudioFormatOptions_AudioEncoding = {
  LINEAR16_PCM: 'LINEAR16_PCM',
} as const;

export type _com_platform_gate_AudioFormatOptions_AudioEncoding =
  | 'LINEAR16_PCM'
  | 0

export type _com_platform_gate_AudioFormatOptions_AudioEncoding__Output = typeof _com_platform_gate_AudioFormatOptions_AudioEncoding[keyof typeof _com_platform_gate_AudioFormatOptions_AudioEncoding]

export interface AudioFormatOptions {
  'audio_encoding'?: (_com_platform_gate_AudioFormatOptions_AudioEncoding);
  'sample_rate_hertz'?: (number | string | Long);
  'chunk_size_kb'?: (number | string | Long);
  '_audio_encoding'?: "audio_encoding";
  '_sample_rate_hertz'?: "sample_rate_hertz";
  '_chunk_size_kb'?: "chunk_size_kb";
}

export interface AudioFormatOptions__Output {
  'audio_encoding'?: (_com_platform_gate_AudioFormatOptions_AudioEncoding__Output);
  'sample_rate_hertz'?: (number);
  'chunk_size_kb'?: (number);
  '_audio_encoding'?: "audio_encoding";
  '_sample_rate_hertz'?: "sample_rate_hertz";
  '_chunk_size_kb'?: "chunk_size_kb";
}
