import { cpus, loadavg, totalmem, release, platform } from 'node:os';
import { readFileSync } from 'node:fs';
import { ROOT } from './procs.js';

export interface Machine {
  cpuModel: string;
  cores: number;
  memoryGB: number;
  node: string;
  os: string;
  loadAverageAtStart: number[];
  versions: Record<string, string>;
}

function version(pkg: string): string {
  try {
    return (JSON.parse(readFileSync(`${ROOT}node_modules/${pkg}/package.json`, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** What the figures were measured on; load average shows how busy the shared machine was. */
export function machine(): Machine {
  const list = cpus();
  return {
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGB: Math.round(totalmem() / 1024 ** 3),
    node: process.version,
    os: `${platform()} ${release()}`,
    loadAverageAtStart: loadavg().map((v) => Math.round(v * 100) / 100),
    versions: {
      '@portkey-ai/gateway': version('@portkey-ai/gateway'),
      autocannon: version('autocannon'),
      koa: version('koa'),
      '@grpc/grpc-js': version('@grpc/grpc-js'),
    },
  };
}
