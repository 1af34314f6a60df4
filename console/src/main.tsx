import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render } from 'preact';
import { App } from './app.tsx';
import './styles.css';

// Server state lives in this cache only; a failed read is shown, not retried three times behind a spinner.
const queries = new QueryClient({ defaultOptions: { queries: { retry: 1, staleTime: 5_000 } } });

render(
  <QueryClientProvider client={queries}>
    <App />
  </QueryClientProvider>,
  document.getElementById('app')!,
);
