/**
 * Reads a V8 `.cpuprofile` (node --cpu-prof) and lists where the time went: the top frames by self
 * time, and self time by package or project folder, with idle and GC apart.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** `node_modules/<pkg>` (scoped too), a project folder such as `core/gate`, or `node:internal`. */
export function ownerOf(url: string): string {
  if (!url) return '(native/V8)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return 'node (internals)';
  const m = /\/(core|plugins|sdk|examples|bench)\/(?:([^/]+)\/)?/.exec(url);
  return m ? `${m[1]}/${m[2] ?? ''}`.replace(/\/$/, '') : url;
}

export function summariseProfile(path: string, top = 25): string {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    self.set(id, (self.get(id) ?? 0) + dt);
    total += dt;
  });
  const frames = new Map<string, number>();
  const owners = new Map<string, number>();
  let idle = 0;
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') {
      idle += us;
      continue;
    }
    const short = url.replace(/^.*?\/(node_modules\/|core\/|plugins\/|sdk\/|examples\/|bench\/)/, '$1');
    const key = `${functionName || '(anonymous)'}  ${short}${url ? `:${lineNumber + 1}` : ''}`;
    frames.set(key, (frames.get(key) ?? 0) + us);
    const owner = ['(garbage collector)', '(program)'].includes(functionName) ? functionName : ownerOf(url);
    owners.set(owner, (owners.get(owner) ?? 0) + us);
  }
  const busy = total - idle;
  const pct = (us: number) => `${((100 * us) / busy).toFixed(1).padStart(5)}%`;
  const lines = [
    `busy ${(busy / 1e6).toFixed(1)} s of ${(total / 1e6).toFixed(1)} s sampled; shares are of busy time`,
    '',
    'by package / folder:',
  ];
  for (const [owner, us] of [...owners].sort((a, b) => b[1] - a[1]).slice(0, 15)) lines.push(`  ${pct(us)}  ${owner}`);
  lines.push('', 'top frames (self):');
  for (const [key, us] of [...frames].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`  ${pct(us)}  ${key}`);
  return lines.join('\n');
}

/** The summary of each profiled process under `profileDir` (one folder each, as bench/lib/systems.ts writes them). */
export function summariseProfiles(profileDir: string): string {
  const parts: string[] = [];
  for (const name of readdirSync(profileDir)) {
    const dir = join(profileDir, name);
    // Its main thread wrote the largest profile (the others are loader threads).
    const files = readdirSync(dir)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => join(dir, f));
    const main = files.sort((a, b) => statSync(b).size - statSync(a).size)[0];
    if (main) parts.push(`\nTop frames of ${name}, ${main} (self time):\n${summariseProfile(main)}\n`);
  }
  return parts.join('');
}

// `node --import tsx bench/lib/profile.ts <file.cpuprofile> [top]`
if (process.argv[1]?.endsWith('profile.ts') && process.argv[2]) {
  process.stdout.write(`${summariseProfile(process.argv[2], Number(process.argv[3] ?? 25))}\n`);
}
