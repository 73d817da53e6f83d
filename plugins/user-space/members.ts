/**
 * Members of an account: its viewers read the list; its owners add people (by email: an existing user is
 * linked, a new one is created with the password the owner gives), change roles and remove them. The
 * last owner stays (409), so an account is never left without one.
 */
import type Router from '@koa/router';
import { compileRequestSchema, gatewayError, type MemberDoc, type MemberRole, type PluginContext } from '../../core/plugins/index.js';
import { type Access, grantOf, readBody } from './access.js';
import { newPassword } from './auth.js';

const MEMBERS = '/api/platformcore/account/:account/members';
const role = { enum: ['owner', 'developer', 'viewer'] };

const readAdd = compileRequestSchema<{ email: string; role: MemberRole; password?: string }>({
  type: 'object',
  additionalProperties: false,
  required: ['email', 'role'],
  properties: { email: { type: 'string', minLength: 3, maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+$' }, role, password: newPassword },
});
const readRole = compileRequestSchema<{ role: MemberRole }>({
  type: 'object',
  additionalProperties: false,
  required: ['role'],
  properties: { role },
});

export function memberRoutes(router: Router, ctx: PluginContext<any>, access: Access): void {
  const { userSpace } = ctx;

  const view = async (member: MemberDoc) => ({
    userId: member.userId,
    email: (await userSpace.users.get(member.userId))?.email ?? null,
    role: member.role,
  });

  /** Refuses to take the account's last owner away. */
  const keepAnOwner = async (accountId: number, userId: string) => {
    const current = await userSpace.members.role(accountId, userId);
    if (current !== 'owner') return;
    const owners = (await userSpace.members.ofAccount(accountId)).filter((m) => m.role === 'owner');
    if (owners.length <= 1)
      throw gatewayError('CONFLICT', { args: { reason: "This is the account's last owner: make another member owner first" } });
  };

  router.get(MEMBERS, access.require('viewer'), async (koa) => {
    const members = await userSpace.members.ofAccount(grantOf(koa).account!.id);
    koa.body = { members: await Promise.all(members.map(view)) };
  });

  router.post(MEMBERS, access.require('owner'), async (koa) => {
    const account = grantOf(koa).account!;
    const body = readAdd(await readBody(ctx, koa));
    let user = await userSpace.users.byEmail(body.email);
    const created = !user;
    if (!user) {
      if (body.password === undefined)
        throw gatewayError('VALIDATION_FAILED', {
          param: 'password',
          args: { reason: `no user has email '${body.email}': give a password to create one` },
        });
      user = await userSpace.users.create({ email: body.email, password: body.password });
    }
    if (await userSpace.members.role(account.id, user._id)) {
      throw gatewayError('CONFLICT', {
        param: 'email',
        args: { reason: `'${user.email}' is already a member of account '${account.name}': change the role with PATCH` },
      });
    }
    const member = await userSpace.members.set(account.id, user._id, body.role);
    koa.status = 201;
    koa.body = { ...(await view(member)), created };
  });

  router.patch(`${MEMBERS}/:userId`, access.require('owner'), async (koa) => {
    const account = grantOf(koa).account!;
    const { role: next } = readRole(await readBody(ctx, koa));
    const userId = koa.params.userId!;
    if (next !== 'owner') await keepAnOwner(account.id, userId);
    const member = await userSpace.members.update(account.id, userId, next);
    if (!member) throw gatewayError('ENTITY_NOT_FOUND_BY_ID', { args: { entity: 'member', id: userId } });
    koa.body = await view(member);
  });

  router.delete(`${MEMBERS}/:userId`, access.require('owner'), async (koa) => {
    const account = grantOf(koa).account!;
    const userId = koa.params.userId!;
    await keepAnOwner(account.id, userId);
    if (!(await userSpace.members.remove(account.id, userId)))
      throw gatewayError('ENTITY_NOT_FOUND_BY_ID', { args: { entity: 'member', id: userId } });
    koa.status = 204;
  });
}
