import { describe, expect } from 'vitest';
import request from 'supertest';
import { RouteTable } from '../../api/dispatch.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { bearer } from '../helpers/auth.js';

describe('the route table (api/dispatch.ts)', () => {
  const table = new RouteTable<string>();
  table.add('get', '/api/v1/review', 'list');
  table.add('get', '/api/v1/review/{id}', 'one');
  table.add('post', '/api/v1/review/{id}/send', 'send');
  table.add('get', '/api/v1/leads/export', 'export');
  table.add('get', '/api/v1/leads/{id}', 'lead');
  table.add('get', '/api/v1/things/{id}', 'thing');
  table.add('get', '/api/v1/things/special', 'never: an earlier route takes it');

  it('matches static paths case-insensitively and with one trailing slash', () => {
    expect(table.find('GET', '/api/v1/review')).toEqual({ value: 'list', params: {} });
    expect(table.find('GET', '/API/V1/Review/')).toEqual({ value: 'list', params: {} });
    expect(table.find('GET', '/api/v1/review//')).toBeNull();
    expect(table.find('GET', '/api/v1/reviews')).toBeNull();
    expect(table.find('GET', 'api/v1/review')).toBeNull();
  });

  it('takes parameters as written in case, percent-decoded, and never empty', () => {
    expect(table.find('GET', '/api/v1/review/Crd_AbC')).toEqual({ value: 'one', params: { id: 'Crd_AbC' } });
    expect(table.find('POST', '/api/v1/review/crd_1/send/')).toEqual({ value: 'send', params: { id: 'crd_1' } });
    expect(table.find('GET', '/api/v1/review/a%20b%2Fc')).toEqual({ value: 'one', params: { id: 'a b/c' } });
    // Not decodable: passed on as written, for the route's schema to refuse.
    expect(table.find('GET', '/api/v1/review/%E0%A4')).toEqual({ value: 'one', params: { id: '%E0%A4' } });
    expect(table.find('POST', '/api/v1/review//send')).toBeNull();
  });

  it('serves HEAD with GET routes, and no other method', () => {
    expect(table.find('HEAD', '/api/v1/review/crd_1')).toEqual({ value: 'one', params: { id: 'crd_1' } });
    expect(table.find('POST', '/api/v1/review/crd_1')).toBeNull();
    expect(table.find('DELETE', '/api/v1/review')).toBeNull();
    expect(table.find('OPTIONS', '/api/v1/review')).toBeNull();
  });

  it('lets the table order decide between two routes that both match', () => {
    expect(table.find('GET', '/api/v1/leads/export')?.value).toBe('export');
    expect(table.find('GET', '/api/v1/leads/lea_1')?.value).toBe('lead');
    expect(table.find('GET', '/api/v1/things/special')?.value).toBe('thing');
  });
});

describe('dispatch through the app', () => {
  let env: TestEnv;
  let tenant: { token: string };
  it.beforeAll(async ({ env: e }) => {
    env = e;
    tenant = await env.tenant();
  });

  it('answers a path in another case, or with a trailing slash, as the route', async () => {
    for (const path of ['/api/v1/me', '/API/V1/ME', '/api/v1/me/', '/api/v1/me?x=1']) {
      const res = await request(env.app).get(path).set('Authorization', bearer(tenant.token));
      expect(res.status, path).toBe(200);
      expect(res.body.me?.tokenId, path).toBeTruthy();
    }
  });

  it('answers HEAD like GET without a body', async () => {
    const res = await request(env.app).head('/api/v1/me').set('Authorization', bearer(tenant.token));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.text ?? '').toBe('');
  });

  it('answers another method on a known path, OPTIONS included, with the JSON 404', async () => {
    for (const method of ['delete', 'options', 'put'] as const) {
      const res = await request(env.app)[method]('/api/v1/me').set('Authorization', bearer(tenant.token));
      expect(res.status, method).toBe(404);
      expect(res.body, method).toEqual({ error: 'not found' });
    }
  });

  it('answers a parameter that is not valid percent-encoding as the route answers any unknown id, not with a 500', async () => {
    const res = await request(env.app).get('/api/v1/review/%E0%A4').set('Authorization', bearer(tenant.token));
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.error).toBeTruthy();
  });
});
