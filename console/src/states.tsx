import type { ComponentChildren } from 'preact';

/** The three states every page shows plainly: waiting for the server, nothing there, or the server's error. */
export const Loading = ({ what }: { what: string }) => (
  <p class="state" role="status" aria-live="polite">
    Loading {what}…
  </p>
);

export const Empty = ({ children }: { children: ComponentChildren }) => (
  <p class="state empty" role="status">
    {children}
  </p>
);

export const Failure = ({ error }: { error: unknown }) => (
  <p class="state error" role="alert">
    {error instanceof Error ? error.message : 'Something went wrong.'}
  </p>
);
