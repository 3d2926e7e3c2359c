import { z } from 'zod';
import { SCOPES } from '../../src/tokens/tokens.types.js';

// Settings, API Tokens: the scope list and a person's tokens. The label and scope rules are the token
// service's (src/tokens/tokens.service.ts), so the body takes strings and the service names what is wrong.

export const ScopesList = z.object({
  items: z.array(z.object({ scope: z.enum(SCOPES), description: z.string() }).strict()),
});

export const TokenItem = z
  .object({
    tokenId: z.string(),
    label: z.string(),
    scopes: z.array(z.enum(SCOPES)),
    createdAt: z.number().int(),
    lastUsedAt: z.number().int().nullable(),
    /** Null for a token an operator minted with the admin CLI. */
    holder: z.object({ id: z.string(), name: z.string(), email: z.string() }).strict().nullable(),
  })
  .strict();

export const TokensList = z.object({ items: z.array(TokenItem) }).strict();

export const MintTokenBody = z
  .object({
    label: z.string().meta({ description: '1 to 100 characters (trimmed); names the holder or the use' }),
    scopes: z.array(z.string()).meta({ description: 'Scopes from GET /dashboard/api/scopes' }),
  })
  .strict();

export const MintedToken = z
  .object({ token: TokenItem, secret: z.string().meta({ description: 'The token itself: shown this once, never again' }) })
  .strict();

export const TokenIdParams = z.object({ tokenId: z.string().min(1) });
