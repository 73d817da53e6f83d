import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One built file, read once at start: the console is a few hundred kilobytes. */
export interface Asset {
  body: Buffer;
  type: string;
  etag: string;
  /** Content-hashed names (`assets/app-3F2A….js`) never change: cached for a year. */
  immutable: boolean;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.map': 'application/json',
};

/**
 * Where `npm run build` writes the console: `public/` beside the compiled plugin
 * (dist/plugins/console/public). Run from the sources (tsx, tests), the plugin finds the build in dist/.
 */
export function defaultRoot(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  const beside = join(here, 'public');
  return existsSync(beside) ? beside : join(here, '..', '..', 'dist', 'plugins', 'console', 'public');
}

/** Every file under `root` by its URL path (`index.html`, `assets/app-….js`); empty when there is no build. */
export function loadAssets(root: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  if (!existsSync(root)) return assets;
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) {
        walk(path);
        continue;
      }
      const type = TYPES[extname(name)];
      if (!type) continue;
      const body = readFileSync(path);
      const urlPath = relative(root, path).split(sep).join('/');
      assets.set(urlPath, {
        body,
        type,
        etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
        immutable: urlPath.startsWith('assets/'),
      });
    }
  };
  walk(root);
  return assets;
}
