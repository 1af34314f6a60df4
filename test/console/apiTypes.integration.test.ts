import fs from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { API_TYPES_FILE, apiTypesOf } from '../../console/scripts/apiTypes.ts';
import { startTestService, type TestService } from '../support/testService.ts';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t?.close());

it("the console's committed API types are those of the served OpenAPI document (else: npm run console:api)", async () => {
  const doc = (await t.api('GET', '/api/schema/')).body;
  const committed = fs.readFileSync(API_TYPES_FILE, 'utf8');
  // Not toBe on 400 KB strings: a short message says what to run.
  const current = (await apiTypesOf(doc)) === committed;
  expect(current, 'console/src/api/schema.d.ts is stale: run `npm run console:api`').toBe(true);
});
