import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccessEvent } from '../../../commands/access/model/accessEvents.ts';
import { accessProjection } from '../../../projections/access/accessProjection.ts';
import { accessReader } from '../../../projections/access/accessReader.ts';
import { type ProjectionSpec, projectionSpec, recorded } from '../../support/projectionSpec.ts';

// The access read model follows key management's events: what authentication reads next.
const KEY = '0190a0b0-0000-7000-8000-0000000000a1';
const AT = '2024-05-01T10:00:00.000Z';
const LATER = '2024-05-02T10:00:00.000Z';

let spec: ProjectionSpec<AccessEvent>;
beforeAll(async () => {
  spec = await projectionSpec(accessProjection);
  await spec.given(
    recorded<AccessEvent>([
      {
        type: 'UserCreated',
        data: {
          userId: 1,
          uuid: '0190a0b0-0000-7000-8000-000000000001',
          distinctId: 'u1',
          email: 'a@example.com',
          firstName: 'A',
          lastName: 'B',
          createdAt: AT,
        },
      },
      {
        type: 'ProjectCreated',
        data: {
          projectId: 7,
          name: 'P',
          apiKeyHash: 'old-project-hash',
          apiKeyMask: 'phc_...old1',
          createdByUserId: 1,
          createdAt: AT,
        },
      },
      {
        type: 'PersonalApiKeyCreated',
        data: {
          keyId: KEY,
          userId: 1,
          label: 'ci',
          secureValue: 'old-key-hash',
          maskValue: 'phx_...old1',
          scopes: ['feature_flag:read'],
          scopedProjectIds: [7],
          createdAt: AT,
        },
      },
    ]),
  );
});
afterAll(async () => spec?.close());

describe('access projection: key management', () => {
  it('an update changes only the fields it carries (null projects: all of them)', async () => {
    await spec.given(
      recorded<AccessEvent>(
        [
          {
            type: 'PersonalApiKeyUpdated',
            data: { keyId: KEY, label: 'deploys', updatedAt: LATER },
          },
        ],
        10n,
      ),
    );
    expect(await accessReader(spec.pool).personalKeyOf(1, KEY)).toMatchObject({
      label: 'deploys',
      scopes: ['feature_flag:read'],
      scoped_project_ids: [7],
    });
    await spec.given(
      recorded<AccessEvent>(
        [
          {
            type: 'PersonalApiKeyUpdated',
            data: { keyId: KEY, scopedProjectIds: null, scopes: ['*'], updatedAt: LATER },
          },
        ],
        11n,
      ),
    );
    expect(await accessReader(spec.pool).personalKeyOf(1, KEY)).toMatchObject({
      label: 'deploys',
      scopes: ['*'],
      scoped_project_ids: null,
    });
  });

  it('a roll replaces the hash: the old one authenticates no more, the new one does', async () => {
    const access = accessReader(spec.pool);
    expect(await access.principalByKeyHash('old-key-hash')).toBeDefined();
    await spec.given(
      recorded<AccessEvent>(
        [
          {
            type: 'PersonalApiKeyRolled',
            data: {
              keyId: KEY,
              secureValue: 'new-key-hash',
              maskValue: 'phx_...new1',
              rolledAt: LATER,
            },
          },
        ],
        20n,
      ),
    );
    expect(await access.principalByKeyHash('old-key-hash')).toBeUndefined();
    expect((await access.principalByKeyHash('new-key-hash'))?.keyId).toBe(KEY);
    expect(await access.personalKeyOf(1, KEY)).toMatchObject({
      mask_value: 'phx_...new1',
      last_rolled_at: new Date(LATER),
    });
  });

  it('a reset replaces the project key hash; a delete removes the key', async () => {
    const access = accessReader(spec.pool);
    await spec.given(
      recorded<AccessEvent>(
        [
          {
            type: 'ProjectApiKeyReset',
            data: {
              projectId: 7,
              apiKeyHash: 'new-project-hash',
              apiKeyMask: 'phc_...new1',
              resetAt: LATER,
            },
          },
          { type: 'PersonalApiKeyDeleted', data: { keyId: KEY, deletedAt: LATER } },
        ],
        30n,
      ),
    );
    expect(await access.projectIdByApiKeyHash('old-project-hash')).toBeNull();
    expect(await access.projectIdByApiKeyHash('new-project-hash')).toBe(7);
    expect(await access.principalByKeyHash('new-key-hash')).toBeUndefined();
    expect(await access.personalKeysOf(1, 100)).toEqual([]);
  });
});
