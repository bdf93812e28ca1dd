import http2 from 'node:http2';
import { afterEach, describe, expect, it } from 'vitest';
import { startConfigServer, type ConfigServer } from '../../../src/simulator/config-server/config-server.js';
import { ConfigServerError } from '../../../src/simulator/config-server/deployments.js';
import { matchRoute } from '../../../src/simulator/config-server/routes.js';
import { h2Request } from '../h2-call.js';

const app = '/application/v2/tenant/default/application/music/environment/prod/region/default/instance/default';

function refusal(method: string, path: string): { status: number; errorCode: string; message: string } {
  try {
    matchRoute(method, path);
  } catch (err) {
    if (err instanceof ConfigServerError) return { status: err.status, errorCode: err.errorCode, message: err.message };
    throw err;
  }
  throw new Error(`${method} ${path} matched`);
}

describe('config server routes', () => {
  it('matches a path pattern and method, keeping named segments and the rest percent-encoded', () => {
    const content = matchRoute('GET', '/application/v2/tenant/default/session/7/content/schemas/a%20b.sd');
    expect(content.params).toMatchObject({ tenant: 'default', session: '7' });
    expect(content.rest).toEqual(['schemas', 'a%20b.sd']);
    expect(matchRoute('GET', '/application/v2/tenant/default/session/7/content').rest).toEqual([]);
    expect(matchRoute('GET', `${app}/serviceconverge/localhost:19071`).params.service).toBe('localhost:19071');
    expect(matchRoute('GET', `${app}/`).params.instance).toBe('default');
    expect(matchRoute('GET', '/application/v2/tenant/default/application/').rest).toEqual([]);
  });

  it('405 names the methods the path takes, 404 for a path none takes, 400 for a malformed tenant', () => {
    expect(refusal('POST', app)).toEqual({
      status: 405,
      errorCode: 'METHOD_NOT_ALLOWED',
      message: `Method 'POST' is not supported for '${app}'; use GET or DELETE`,
    });
    expect(refusal('GET', '/application/v2/tenant/default/session')).toMatchObject({
      status: 405,
      message: /use POST$/,
    });
    expect(refusal('GET', '/application/v2/tenant//application')).toMatchObject({
      status: 404,
      errorCode: 'NOT_FOUND',
    });
    expect(refusal('GET', '/application/v2/tenant/default/session/7')).toMatchObject({
      status: 404,
      message: "Nothing at '/application/v2/tenant/default/session/7'",
    });
    expect(refusal('GET', '/application/v2/tenant/%zz/nothing')).toMatchObject({
      status: 400,
      errorCode: 'BAD_REQUEST',
    });
  });
});

describe('config server on the shared listener', () => {
  let server: ConfigServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('answers cleartext HTTP/2 (prior knowledge) as the document port does, with the same routes and errors', async () => {
    server = await startConfigServer({ port: 0 });
    const session = http2.connect(server.url);
    try {
      expect(await h2Request(session, 'GET', '/state/v1/health')).toMatchObject({
        status: 200,
        json: { status: { code: 'up' } },
      });
      expect(await h2Request(session, 'GET', '/application/v2/tenant/default/application/')).toMatchObject({
        status: 200,
        json: [],
      });
      expect(await h2Request(session, 'GET', '/nothing')).toMatchObject({
        status: 404,
        json: { 'error-code': 'NOT_FOUND' },
      });
    } finally {
      session.close();
    }
  });

  it('refuses a package over maxPackageBytes with 413, read in full as the document port reads a body', async () => {
    server = await startConfigServer({ port: 0, maxPackageBytes: 1000 });
    const res = await fetch(`${server.url}/application/v2/tenant/default/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/zip' },
      body: Buffer.alloc(5000),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({
      'error-code': 'BAD_REQUEST',
      message: 'Application package is larger than 1000 bytes',
    });
  });
});
