import type { Request, Response } from 'express';
import { BadRequest, PayloadTooLarge } from '../src/errors.js';

const CONTINUE_DEFERRED = Symbol('100 Continue deferred');

/** Marks a request that sent `Expect: 100-continue` to be told to continue only when its body is read. */
export function deferContinue(req: object): void {
  (req as { [CONTINUE_DEFERRED]?: boolean })[CONTINUE_DEFERRED] = true;
}

/**
 * Reads a request's body raw, at most `limit` bytes (the webhook intake, received mail). A compressed
 * body is refused; a declared length over the limit is refused unread; a body that grows past it is
 * refused at the first byte over, without waiting for the rest (body-parser would read the whole
 * request off the wire before answering). The connection is then closed, not drained. A client waiting
 * for `100 Continue` (deferContinue) is told to send its body here, once nothing refused it before.
 */
export function readRawBody(req: Request, res: Response, limit: number, tooLarge: string): Promise<Buffer> {
  const refuse = () => {
    res.setHeader('Connection', 'close');
    req.pause();
    return new PayloadTooLarge(tooLarge);
  };
  const encoding = String(req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding !== 'identity') return Promise.reject(new BadRequest('body must not be compressed (content-encoding must be identity)'));
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(refuse());
  const waiting = req as { [CONTINUE_DEFERRED]?: boolean };
  if (waiting[CONTINUE_DEFERRED]) {
    waiting[CONTINUE_DEFERRED] = false;
    res.writeContinue();
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onError);
    };
    function onData(chunk: Buffer) {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        reject(refuse());
        return;
      }
      chunks.push(chunk);
    }
    function onEnd() {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    }
    function onError(err?: unknown) {
      cleanup();
      reject(err instanceof Error ? err : new BadRequest('request was aborted before the body arrived'));
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onError);
  });
}
