import type { AnyRequest, AnyResponse } from '../http/http-response.js';
import { adminPath } from './admin-paths.js';
import { documentApi } from './document-routes.js';
import type { DocumentRequest, HandlerState } from './handler-state.js';
import { notFound, reply, replyError } from './replies.js';

export type { DocumentRequest, HandlerState } from './handler-state.js';

const handlerListing = JSON.stringify({
  handlers: [
    {
      id: 'com.yahoo.document.restapi.resource.DocumentV1ApiHandler',
      class: 'com.yahoo.document.restapi.resource.DocumentV1ApiHandler',
      bundle: 'vespaclient-container-plugin:8.0.0',
      serverBindings: ['http://*/document/v1/*'],
    },
  ],
});

/**
 * The request dispatcher for one simulated container: /document/v1 (the document API), `/` (the handler
 * listing the official CLI checks), a health page, and the simulator's own admin paths under /_sim/.
 * (HTTP/1.1's one request at a time per connection is the listener's: http/in-progress.ts.)
 */
export function createRequestHandler(state: HandlerState): (req: AnyRequest, res: AnyResponse) => void {
  return function handle(req: AnyRequest, res: AnyResponse): void {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathId = q < 0 ? url : url.slice(0, q);
    const request: DocumentRequest = { state, req, res, pathId };
    try {
      if (pathId.startsWith('/document/v1')) documentApi(request, q < 0 ? '' : url.slice(q + 1));
      else if (pathId.startsWith('/_sim/')) adminPath(request);
      else if (pathId === '/' && (req.method === 'GET' || req.method === 'HEAD')) reply(request, 200, handlerListing);
      else if (pathId === '/state/v1/health' || pathId === '/status.html' || pathId === '/ApplicationStatus')
        reply(request, 200, '{"status":{"code":"up"}}');
      else notFound(request);
    } catch (err) {
      replyError(request, err);
    }
  };
}
