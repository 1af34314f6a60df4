import { useState } from 'preact/hooks';
import { session } from '../session.ts';

/** Sign-in with a personal API key; the layout checks it with the server (`personal_api_keys/@current/`). */
export function SignIn({ failure }: { failure?: string | undefined }) {
  const [key, setKey] = useState('');
  return (
    <main class="sign-in">
      <h1>hogstream console</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (key.trim()) session.signIn(key.trim());
        }}
      >
        <label for="personal-api-key">Personal API key</label>
        <input
          id="personal-api-key"
          type="password"
          autocomplete="off"
          required
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
          aria-describedby="key-help"
        />
        <p id="key-help" class="help">
          Kept in this tab only (sessionStorage). Create one with{' '}
          <code>npm run cli -- personal-key create</code>.
        </p>
        {failure && (
          <p class="state error" role="alert">
            {failure}
          </p>
        )}
        <button type="submit">Sign in</button>
      </form>
    </main>
  );
}
