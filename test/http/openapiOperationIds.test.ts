import { describe, expect, it } from 'vitest';
import { operationName, withOperationIds } from '../../src/http/openapiOperationIds.ts';

describe('OpenAPI operationIds', () => {
  it('names operations as PostHog’s document does', () => {
    const p = '/api/projects/{project_id}';
    expect(
      [
        ['get', `${p}/feature_flags/`],
        ['post', `${p}/feature_flags/`],
        ['get', `${p}/feature_flags/{id}/`],
        ['put', `${p}/feature_flags/{id}/`],
        ['patch', `${p}/feature_flags/{id}/`],
        ['delete', `${p}/feature_flags/{id}/`],
        ['get', `${p}/feature_flags/local_evaluation/`],
        ['post', `${p}/feature_flags/{id}/dashboard/`],
        ['get', `${p}/feature_flags/{feature_flag_id}/role_access/`],
        ['post', `${p}/feature_flags/{feature_flag_id}/role_access/`],
        ['delete', `${p}/feature_flags/{feature_flag_id}/role_access/{id}/`],
        ['get', '/api/projects/'],
        ['get', '/api/feature_flag/local_evaluation'],
        ['post', '/i/v0/e/'],
        ['get', '/capture/'],
        ['options', '/decide/'],
        ['get', '/array/{token}/config.js'],
        ['get', '/_health'],
      ].map(([method, path]) => operationName(method as string, path as string)),
    ).toEqual([
      'feature_flags_list',
      'feature_flags_create',
      'feature_flags_retrieve',
      'feature_flags_update',
      'feature_flags_partial_update',
      'feature_flags_destroy',
      'feature_flags_local_evaluation_retrieve',
      'feature_flags_dashboard_create',
      'feature_flags_role_access_list',
      'feature_flags_role_access_create',
      'feature_flags_role_access_destroy',
      'projects_list',
      'feature_flag_local_evaluation_retrieve',
      'i_v0_e_create',
      'capture_retrieve',
      'decide_options',
      'array_config_js_retrieve',
      'health_retrieve',
    ]);
  });

  it('numbers a repeated name in path order, whatever the routes’ order, and keeps a given id', () => {
    const doc = {
      paths: {
        '/api/projects/{project_id}/cohorts/{id}/activity/': { get: {} },
        '/api/projects/{project_id}/cohorts/activity/': { get: {} },
        '/api/projects/{project_id}/cohorts/': {
          get: { operationId: 'cohorts_activity_retrieve' },
        },
      } as Record<string, Record<string, { operationId?: string }>>,
    };
    const named = withOperationIds(doc).paths;
    expect(named['/api/projects/{project_id}/cohorts/']?.get?.operationId).toBe(
      'cohorts_activity_retrieve',
    );
    expect(named['/api/projects/{project_id}/cohorts/activity/']?.get?.operationId).toBe(
      'cohorts_activity_retrieve_2',
    );
    expect(named['/api/projects/{project_id}/cohorts/{id}/activity/']?.get?.operationId).toBe(
      'cohorts_activity_retrieve_3',
    );
  });
});
