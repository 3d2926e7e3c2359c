import type { ReactNode } from 'react';
import { PageHeader } from '../ui';

/** The centred card the signed-out pages (sign in, reset, invitation) stand in. */
export function AuthFrame({ title, lede, children }: { title: string; lede?: ReactNode; children: ReactNode }) {
  return (
    <main className="center-page">
      <div className="auth-card">
        <p className="brand">Growth Agent</p>
        <PageHeader title={title}>{lede}</PageHeader>
        {children}
      </div>
    </main>
  );
}
