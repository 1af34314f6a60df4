import { z } from 'zod';

// The path parameter nearly every /api route has, described once for the OpenAPI document.

export const projectIdParam = z
  .string()
  .describe('project id (an integer), or `@current`: the first project the key can see');

/** `{ project_id }`: the params of every route under `/api/projects/:project_id/` with no other */
export const ProjectParams = z.object({ project_id: projectIdParam });
