import type { FastifyRequest } from 'fastify';
import { fail, notFound } from '../core/errors.ts';

const INTEGER = /^-?\d+$/;

/**
 * A `preValidation` hook: a path word in the place of an integer id (`feature_flags/nope/`,
 * `feature_flags/nope/activity/`) names no resource, so it is a 404 as in PostHog, not a 400
 * about the parameter. Named routes (`feature_flags/activity/`, `local_evaluation/`, …) are
 * static segments, which Fastify matches before the parametric ones, so they never get here.
 */
export const notFoundUnlessIntegerIds =
  (names: readonly string[]) =>
  async (request: FastifyRequest): Promise<void> => {
    const params = request.params as Record<string, unknown> | undefined;
    for (const name of names) {
      const value = params?.[name];
      if (typeof value === 'string' && !INTEGER.test(value)) fail(notFound());
    }
  };
