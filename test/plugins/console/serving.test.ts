/**
 * The console plugin serves the built console (scripts/build-console.mjs) with its security headers:
 * a CSP that allows no inline script or style, and a page that needs none; content-hashed assets
 * cached for good, the page revalidated; a view's path answers the page, a missing file a coded 404.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole } from '../../../scripts/build-console.mjs';
import { startTestGateway, testConfigInput, type TestGateway } from '../../support/gateway.js';

describe('console plugin', () => {
  let gw: TestGateway;
  let root = '';

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'console-build-'));
    await buildConsole(root);
    gw = await startTestGateway(testConfigInput({ plugins: { enabled: ['console'], options: { console: { root } } } }));
  });
  afterAll(async () => {
    await gw?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('answers the page with a CSP that forbids inline scripts and styles, and a page that has none', async () => {
    const response = await fetch(`${gw.httpUrl}/console/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    const html = await response.text();
    // Every script is a file of the console's own; no inline script, style element or style attribute.
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBe(1);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/src="\/console\/assets\/app-[A-Z0-9]+\.js"/);
      expect(body!.trim()).toBe('');
    }
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=|https?:\/\//i);
  });

  it('serves the hashed assets for good and revalidates the page by ETag', async () => {
    const html = await (await fetch(`${gw.httpUrl}/console/`)).text();
    const script = /src="(\/console\/assets\/[^"]+)"/.exec(html)![1]!;
    const asset = await fetch(`${gw.httpUrl}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-security-policy')).toContain("script-src 'self'");
    const page = await fetch(`${gw.httpUrl}/console/keys`);
    const etag = page.headers.get('etag')!;
    expect(await page.text()).toBe(html);
    const again = await fetch(`${gw.httpUrl}/console/keys`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
  });

  it('redirects /console to /console/, and answers a missing file with a coded 404', async () => {
    const redirect = await fetch(`${gw.httpUrl}/console`, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toBe('/console/');
    const missing = await fetch(`${gw.httpUrl}/console/assets/missing.js`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    // Only files of the build are served, whatever the path says.
    for (const path of ['/console/../package.json', '/console/%2e%2e/package.json', '/console/assets/..%2f..%2fpackage.json']) {
      const response = await fetch(`${gw.httpUrl}${path}`);
      expect(response.status, path).toBe(404);
    }
  });
});
