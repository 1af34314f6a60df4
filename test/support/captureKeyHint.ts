import { PROJECT_KEY_HINT } from '../../ingress/ingressErrors.ts';

/**
 * PostHog's capture 401s send people to PostHog's project settings; ours say where this product's
 * key comes from (PROJECT_KEY_HINT). A case file's expected body with our hint in place of
 * PostHog's: type, code and attr stay PostHog's.
 */
const POSTHOG_KEY_HINT = 'You can find your project API key in PostHog project settings.';

export const withOurKeyHint = (body: Record<string, unknown>) =>
  typeof body.detail === 'string' && body.detail.endsWith(POSTHOG_KEY_HINT)
    ? { ...body, detail: body.detail.replace(POSTHOG_KEY_HINT, PROJECT_KEY_HINT) }
    : body;
