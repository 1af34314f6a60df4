import { describe, it } from 'vitest';
import { actionDecider } from '../../../commands/actions/actionDecider.ts';
import type { ActionCreated, ActionFields } from '../../../commands/actions/model/action.ts';
import { DeciderSpecification } from '../../support/deciderSpec.ts';

const given = DeciderSpecification.for(actionDecider);
const step = {
  event: '$pageview',
  properties: null,
  selector: null,
  tag_name: null,
  text: null,
  text_matching: null,
  href: null,
  href_matching: null,
  url: '/pricing',
  url_matching: 'contains',
} as const;
const fields: ActionFields = {
  name: 'Saw pricing',
  description: '',
  tags: [],
  post_to_slack: false,
  slack_message_format: '',
  steps: [step],
  pinned_at: null,
};
const create = {
  type: 'CreateAction',
  actionId: 4,
  projectId: 1,
  fields,
  createdAt: '2026-03-02T00:00:00.000Z',
  createdByUserId: 3,
  nameTakenBy: null,
} as const;
const created: ActionCreated = {
  type: 'ActionCreated',
  data: {
    actionId: 4,
    projectId: 1,
    fields,
    createdAt: '2026-03-02T00:00:00.000Z',
    createdByUserId: 3,
  },
};
const patch = (changes: Record<string, unknown>, more: Record<string, unknown> = {}) =>
  ({
    type: 'PatchAction',
    actionId: 4,
    projectId: 1,
    changes,
    nameTakenBy: null,
    now: '2026-03-05T00:00:00.000Z',
    ...more,
  }) as const;

describe('actionDecider', () => {
  it('creates once; a name taken by a live action of the project is refused as PostHog words it', () => {
    given([]).when(create).then([created]);
    given([created]).when(create).thenNothing();
    given([])
      .when({ ...create, nameTakenBy: 9 })
      .thenFails({
        code: 'unique',
        attr: 'name',
        detail: 'This project already has an action with this name, ID 9',
      });
    given([created])
      .when(patch({ name: 'Other' }, { nameTakenBy: 9 }))
      .thenFails({ code: 'unique' });
  });

  it('records only what changes, steps compared whole', () => {
    given([created])
      .when(patch({ steps: [step], description: '' }))
      .thenNothing();
    const steps = [step, { ...step, url: null, event: 'signed_up' }];
    given([created])
      .when(patch({ steps }))
      .then([{ type: 'ActionUpdated', data: { actionId: 4, changes: { steps } } }]);
  });

  it("pins at the server's time, keeps the first pin, and unpins with null", () => {
    const pinned = {
      type: 'ActionUpdated',
      data: { actionId: 4, changes: { pinned_at: '2026-03-05T00:00:00.000Z' } },
    } as const;
    given([created])
      .when(patch({ pinned_at: '1999-01-01T00:00:00Z' }))
      .then([pinned]);
    given([created, pinned])
      .when(patch({ pinned_at: '2030-01-01T00:00:00Z' }))
      .thenNothing();
    given([created, pinned])
      .when(patch({ pinned_at: null }))
      .then([{ type: 'ActionUpdated', data: { actionId: 4, changes: { pinned_at: null } } }]);
  });

  it("soft-deletes, restores, and answers not found for another project's action", () => {
    const deleted = { type: 'ActionSoftDeleted', data: { actionId: 4 } } as const;
    given([created])
      .when(patch({ deleted: true }))
      .then([deleted]);
    given([created, deleted])
      .when(patch({ deleted: false }))
      .then([{ type: 'ActionRestored', data: { actionId: 4 } }]);
    given([created])
      .when(patch({ name: 'x' }, { projectId: 2 }))
      .thenFails({ kind: 'not_found' });
    given([])
      .when(patch({ name: 'x' }))
      .thenFails({ kind: 'not_found' });
  });
});
