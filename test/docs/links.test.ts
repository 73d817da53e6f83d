import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docFiles, fencedBlocks } from '../support/doc-examples.js';
import { repoRoot } from '../support/python.js';

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const counts = new Map<string, number>();
  const code = new Set(fencedBlocks(text).flatMap((b) => Array.from({ length: b.code.split('\n').length + 2 }, (_, i) => b.line + i)));
  text.split('\n').forEach((line, i) => {
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (!heading || code.has(i + 1)) return;
    const base = anchorOf(heading[1]!);
    const n = counts.get(base) ?? 0;
    counts.set(base, n + 1);
    anchors.add(n ? `${base}-${n}` : base);
  });
  return anchors;
}

/** Links outside code blocks and inline code: `[text](target)`. */
function linksOf(text: string): { target: string; line: number }[] {
  const code = new Set(fencedBlocks(text).flatMap((b) => Array.from({ length: b.code.split('\n').length + 2 }, (_, i) => b.line + i)));
  const links: { target: string; line: number }[] = [];
  text.split('\n').forEach((line, i) => {
    if (code.has(i + 1)) return;
    for (const m of line.replace(/`[^`]*`/g, '``').matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) links.push({ target: m[1]!, line: i + 1 });
  });
  return links;
}

const files = [...docFiles(repoRoot), 'sdk/README.md'].filter((f) => existsSync(join(repoRoot, f)));

describe('relative links in README.md and docs/', () => {
  for (const file of files) {
    it(`${file}: every relative link and anchor resolves`, () => {
      const text = readFileSync(join(repoRoot, file), 'utf8');
      const broken: string[] = [];
      for (const { target, line } of linksOf(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
        const [path, anchor] = target.split('#') as [string, string | undefined];
        const resolved = path ? join(dirname(join(repoRoot, file)), decodeURIComponent(path)) : join(repoRoot, file);
        if (!existsSync(resolved)) {
          broken.push(`${file}:${line}: ${target} (no ${relative(repoRoot, resolved)})`);
          continue;
        }
        if (anchor && resolved.endsWith('.md') && statSync(resolved).isFile() && !anchorsOf(readFileSync(resolved, 'utf8')).has(anchor)) {
          broken.push(`${file}:${line}: ${target} (no heading with anchor #${anchor})`);
        }
      }
      expect(broken).toEqual([]);
    });
  }
});

describe('files in the repository', () => {
  it('no tracked file cites a design document or folder outside the repository (docs/design.md holds what they need)', () => {
    // Spelled in pieces, so this file does not match itself.
    const outside = new RegExp(['DESIGN', '(\\.md|\\s+section)|\\.\\./', 'shared(?![\\w-])'].join(''));
    const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: repoRoot, encoding: 'utf8' }).split('\0').filter(Boolean);
    const citing: string[] = [];
    for (const file of tracked) {
      const path = join(repoRoot, file);
      if (!existsSync(path) || !statSync(path).isFile() || file.endsWith('package-lock.json')) continue;
      readFileSync(path, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (outside.test(line)) citing.push(`${file}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(citing).toEqual([]);
  });

  it('the Python stubs the docs generate in the repository root are git-ignored', () => {
    // docs/gate-protocol.md and docs/model-service.md: python -m grpc_tools.protoc … --python_out=. --grpc_python_out=.
    const ignored = execFileSync('git', ['check-ignore', 'gate_pb2.py', 'gate_pb2_grpc.py'], { cwd: repoRoot, encoding: 'utf8' });
    expect(ignored.split('\n').filter(Boolean)).toEqual(['gate_pb2.py', 'gate_pb2_grpc.py']);
  });
});
