import createClient, { type Middleware } from 'openapi-fetch';
import { session } from '../session.ts';
import type { components, paths } from './schema.d.ts';

export type Schemas = components['schemas'];
export type ApiError = Schemas['Error'];

/** Every request carries the signed-in key; same origin, so no base URL to configure. */
const auth: Middleware = {
  onRequest({ request }) {
    const key = session.key();
    if (key) request.headers.set('authorization', `Bearer ${key}`);
    return request;
  },
};

export const api = createClient<paths>({ baseUrl: window.location.origin });
api.use(auth);

/** The API's error shape as an Error, so TanStack Query's `error` carries its detail to the page. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiError | undefined,
  ) {
    super(body?.detail ?? `The server answered ${status}.`);
  }
}

/** openapi-fetch's `{ data, error, response }` → the data, or an ApiFailure thrown for the query cache. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data !== undefined) return result.data;
  throw new ApiFailure(result.response.status, result.error as ApiError | undefined);
}
