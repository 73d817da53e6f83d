import busboy from 'busboy';
import type { Context } from 'koa';
import { gatewayError } from '../../core/plugins/index.js';

export interface MultipartForm {
  fields: Record<string, string>;
  /** The `file` part, if one came. */
  file?: { name: string; mimeType: string; data: Buffer };
}

export interface MultipartLimits {
  /** Largest file accepted (413 beyond). */
  fileBytes: number;
  /** Largest text field. */
  fieldBytes: number;
  fields: number;
}

/**
 * Reads a multipart/form-data body with busboy: text fields, and the part named `fileField` kept in
 * memory up to `limits.fileBytes` (413 REQUEST_TOO_LARGE beyond, the rest is not read). Other file
 * parts are drained and ignored. 415 for any other content type, 400 for a malformed body.
 */
export function readMultipart(koa: Context, fileField: string, limits: MultipartLimits): Promise<MultipartForm> {
  const contentType = koa.get('content-type');
  if (!/^multipart\/form-data\b/i.test(contentType)) {
    return Promise.reject(
      gatewayError('UNSUPPORTED_MEDIA_TYPE', { args: { contentType: contentType || 'none', expected: 'multipart/form-data' } }),
    );
  }
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: koa.req.headers,
        limits: { fileSize: limits.fileBytes, files: 4, fields: limits.fields, fieldSize: limits.fieldBytes, parts: limits.fields + 4 },
      });
    } catch (err) {
      reject(gatewayError('VALIDATION_FAILED', { args: { reason: `multipart body: ${(err as Error).message}` } }));
      return;
    }
    // Field names are the caller's: a null-prototype object, so no name reads or writes Object.prototype.
    const form: MultipartForm = { fields: Object.create(null) as Record<string, string> };
    let failed = false;
    const fail = (error: ReturnType<typeof gatewayError>) => {
      if (failed) return;
      failed = true;
      koa.req.unpipe(parser);
      // Stop reading the upload; the connection closes after the error response.
      koa.req.resume();
      reject(error);
    };
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated)
        fail(
          gatewayError('VALIDATION_FAILED', { param: name, args: { reason: `field '${name}' is longer than ${limits.fieldBytes} bytes` } }),
        );
      else form.fields[name] = value;
    });
    parser.on('file', (name, stream, info) => {
      if (name !== fileField || form.file) {
        stream.resume();
        return;
      }
      const parts: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => parts.push(chunk));
      stream.on('limit', () => fail(gatewayError('REQUEST_TOO_LARGE', { param: fileField, args: { limit: limits.fileBytes } })));
      stream.on('close', () => {
        if (!failed) form.file = { name: info.filename ?? '', mimeType: info.mimeType, data: Buffer.concat(parts) };
      });
    });
    parser.on('fieldsLimit', () => fail(gatewayError('VALIDATION_FAILED', { args: { reason: `more than ${limits.fields} form fields` } })));
    parser.on('partsLimit', () => fail(gatewayError('VALIDATION_FAILED', { args: { reason: 'too many form parts' } })));
    parser.on('error', (err: Error) => fail(gatewayError('VALIDATION_FAILED', { args: { reason: `multipart body: ${err.message}` } })));
    parser.on('close', () => {
      if (!failed) resolve(form);
    });
    koa.req.on('aborted', () => fail(gatewayError('REQUEST_CANCELED')));
    koa.req.pipe(parser);
  });
}
