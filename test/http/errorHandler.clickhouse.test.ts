import { parseError } from '@clickhouse/client';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { HogQLTimeoutError } from '../../projections/hogql/errors.ts';
import { installErrorHandler } from '../../src/http/errorHandler.ts';

/**
 * The error handler's backstop for ClickHouse errors that escape a reader: the query's fault is a
 * 400 in the API's error shape, an outage a 503, anything else a 500.
 */
const answer = async (error: unknown) => {
  const app = Fastify({ logger: false });
  installErrorHandler(app);
  app.get('/', async () => {
    throw error;
  });
  const res = await app.inject({ method: 'GET', url: '/' });
  await app.close();
  return { status: res.statusCode, body: res.json() as Record<string, unknown> };
};

describe('ClickHouse errors reaching the error handler', () => {
  it('a statement ClickHouse refuses: 400 naming the error', async () => {
    const res = await answer(
      parseError('Code: 167. DB::Exception: AST is too deep. Maximum: 1000. (TOO_DEEP_AST)'),
    );
    expect(res).toEqual({
      status: 400,
      body: {
        type: 'validation_error',
        code: 'invalid_input',
        detail: 'The query could not run (TOO_DEEP_AST): AST is too deep. Maximum: 1000.',
        attr: null,
      },
    });
  });

  it('ClickHouse unreachable: 503; an error that is not the query: 500', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8123'), {
      code: 'ECONNREFUSED',
    });
    expect((await answer(refused)).status).toBe(503);
    const keeper = parseError('Code: 999. DB::Exception: Session expired. (KEEPER_EXCEPTION)');
    expect(await answer(keeper)).toMatchObject({ status: 500, body: { type: 'server_error' } });
  });

  it('a query that ran out of time (statusCode 504): 504 with its detail, not a 500', async () => {
    const res = await answer(new HogQLTimeoutError(30));
    expect(res.status).toBe(504);
    expect(res.body).toMatchObject({ type: 'server_error', code: 'timeout' });
    expect(res.body.detail).toMatch(/longer than 30 seconds/);
  });
});
