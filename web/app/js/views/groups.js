// Groups, their members and roles, invitations by link, and accepting one (/invite/{code}).
import { api, session } from "../api.js";
import { store } from "../store.js";
import { h, toast, sheet, field, errorText } from "../ui.js";

export async function groupsView() {
  const err = h("p", { class: "error", role: "alert" });
  const { groups } = await api("GET", "/v1/groups");
  await store.loadMe().catch(() => {});
  // Creating a group is Premium: said before the form is filled, not after.
  const premium = store.me?.tier === "premium";
  const name = h("input", { name: "name", required: true, maxlength: 50, disabled: !premium });
  return h("section", { class: "stack" },
    h("h1", {}, "Groups"),
    groups.length ? h("ul", { class: "list" }, ...groups.map((g) => h("li", {},
      h("a", { class: "card", href: `#/groups/${encodeURIComponent(g.id)}` }, h("div", { class: "title" }, g.name),
        h("div", { class: "muted" }, `${g.memberCount} of ${g.maxMembers} members`)))))
      : h("p", { class: "muted" }, "No groups yet. A group shares alarms between family or flatmates (Premium)."),
    h("form", { class: "stack card", onsubmit: async (e) => {
      e.preventDefault(); err.textContent = "";
      try { const g = await api("POST", "/v1/groups", { name: name.value }); location.hash = `#/groups/${encodeURIComponent(g.id)}`; }
      catch (x) { if (x.code === "CA002") { sessionStorage.setItem("chronir.paywallReason", x.message); location.hash = "#/upgrade"; } else err.textContent = errorText(x); }
    } }, h("h2", { style: "margin-top:0" }, "New group"),
      premium ? null : h("p", { "data-locked": "groups" }, "Creating a group needs Premium. ", h("a", { href: "#/upgrade" }, "See the plans"),
        " — you can still join a group someone invites you to."),
      field("Name", name), err, h("button", { class: "btn btn-primary", type: "submit", disabled: !premium }, "Create group")));
}

/** The group's rules (the owner sets who edits alarms; owner and admins the pending window)
 *  and, for everyone, their own completion pushes (US-10.2, US-10.3). */
function settingsBlock(g, me, act) {
  if (!me) return null;
  const settings = g.settings || { alarmEditors: "admins" };
  const editors = h("select", { name: "alarmEditors", disabled: me.role !== "owner" },
    ...[["owner", "Only the owner"], ["admins", "The owner and admins"], ["everyone", "Every member"]].map(([v, label]) =>
      h("option", { value: v, selected: settings.alarmEditors === v }, label)));
  const windowField = h("input", { name: "pendingWindowMinutes", type: "number", min: 15, max: 10080, placeholder: "120",
    value: settings.pendingWindowMinutes ?? "", disabled: me.role === "member" });
  const pushes = h("input", { type: "checkbox", name: "completionPushes", checked: me.completionPushes !== false,
    style: "display:inline;width:auto;min-height:auto" });
  pushes.addEventListener("change", () => act(async () => {
    await api("PATCH", `/v1/groups/${encodeURIComponent(g.id)}/members/${encodeURIComponent(me.uid)}`, { completionPushes: pushes.checked });
    toast(pushes.checked ? "You will be told when someone completes a group alarm" : "No more completion notifications from this group");
  }));
  const save = me.role !== "member" ? h("button", { class: "btn", type: "submit" }, "Save rules") : null;
  return h("form", { class: "stack card", "aria-label": "Group rules", onsubmit: (e) => { e.preventDefault(); act(async () => {
    const body = { pendingWindowMinutes: windowField.value ? Number(windowField.value) : null };
    if (me.role === "owner") body.alarmEditors = editors.value;
    await api("PATCH", `/v1/groups/${encodeURIComponent(g.id)}`, body);
    toast("Saved");
  }); } },
    h("h2", { style: "margin-top:0" }, "Rules"),
    field("Who creates and edits the group's alarms", editors),
    field("Minutes before a fired alarm counts as missed", windowField),
    h("label", {}, pushes, " Tell me when someone completes a group alarm"),
    save);
}

export async function groupView(id) {
  const err = h("p", { class: "error", role: "alert" });
  const g = await api("GET", `/v1/groups/${encodeURIComponent(id)}`);
  const { members } = await api("GET", `/v1/groups/${encodeURIComponent(id)}/members`);
  const me = members.find((m) => m.uid === store.me?.uid);
  const canManage = me && (me.role === "owner" || me.role === "admin");
  const editors = g.settings?.alarmEditors || "admins";
  const canAddAlarms = me && (editors === "everyone" || (editors === "owner" ? me.role === "owner" : canManage));
  const act = async (fn) => { err.textContent = ""; try { await fn(); } catch (e) { err.textContent = errorText(e); } };
  const groupAlarms = store.sorted().filter((a) => a.groupId === id);
  return h("section", { class: "stack" },
    h("p", {}, h("a", { href: "#/groups" }, "← Groups")),
    h("h1", {}, g.name),
    h("table", { "aria-label": "Members" }, h("thead", {}, h("tr", {}, h("th", {}, "Member"), h("th", {}, "Role"), h("th", {}, ""))),
      h("tbody", {}, ...members.map((m) => h("tr", {}, h("td", {}, m.displayName), h("td", {}, m.role),
        h("td", {}, canManage && m.role !== "owner" && m.uid !== store.me?.uid
          ? h("div", { class: "row" },
              me.role === "owner" ? h("button", { class: "btn", onclick: () => act(async () => { await api("PATCH", `/v1/groups/${id}/members/${m.uid}`, { role: m.role === "admin" ? "member" : "admin" }); location.reload(); }) },
                m.role === "admin" ? "Make member" : "Make admin") : null,
              h("button", { class: "btn btn-danger", onclick: () => act(async () => { await api("DELETE", `/v1/groups/${id}/members/${m.uid}`); location.reload(); }) }, "Remove"))
          : ""))))),
    err,
    canManage ? h("button", { class: "btn btn-primary", onclick: () => act(async () => {
      const inv = await api("POST", "/v1/invitations", { type: "group", referenceId: id });
      const url = `${location.origin}/invite/${inv.id}`;
      sheet("Invite by link", h("div", { class: "stack" }, h("p", {}, `Anyone with this link can join ${g.name}:`),
        h("input", { readonly: true, value: url, "aria-label": "Invitation link", "data-invite": url }),
        h("button", { class: "btn", onclick: () => navigator.clipboard?.writeText(url) }, "Copy")));
    }) }, "Invite by link") : null,
    settingsBlock(g, me, act),
    h("h2", {}, "Group alarms"),
    groupAlarms.length ? h("ul", { class: "list" }, ...groupAlarms.map((a) => h("li", {}, h("a", { class: "card", href: `#/alarms/${a.id}` }, a.title))))
      : h("p", { class: "muted" }, "None yet. Open one of your alarms and move it into this group."),
    canAddAlarms ? h("button", { class: "btn", onclick: () => {
      const own = store.sorted().filter((a) => a.ownerId === store.me?.uid && a.groupId !== id);
      const close = sheet("Add an alarm to the group", h("div", { class: "stack" }, ...own.map((a) => h("button", { class: "btn", onclick: () => act(async () => {
        const next = await api("PATCH", `/v1/alarms/${a.id}`, { groupId: id }, { headers: { "If-Match": `"${a.version}"` } });
        store.put(next); close(); location.reload();
      }) }, a.title))));
    } }, "Add one of my alarms") : null,
    me && me.role !== "owner" ? h("button", { class: "btn btn-danger", onclick: () => act(async () => { await api("DELETE", `/v1/groups/${id}/members/${me.uid}`); location.hash = "#/groups"; }) }, "Leave group") : null);
}

export async function inviteView(code) {
  if (!session.get()) {
    sessionStorage.setItem("chronir.after", `#/invite/${code}`);
    return h("section", { class: "stack" }, h("h1", {}, "You're invited"), h("p", {}, "Sign in or create an account to accept."),
      h("div", { class: "row" }, h("a", { class: "btn btn-primary", href: "#/signup" }, "Create account"), h("a", { class: "btn", href: "#/signin" }, "Sign in")));
  }
  document.getElementById("bar").hidden = false;
  const err = h("p", { class: "error", role: "alert" });
  const inv = await api("GET", `/v1/invitations/${encodeURIComponent(code)}`);
  const what = inv.type === "group" ? `the group “${inv.referenceName}”` : `the alarm “${inv.referenceName}”`;
  return h("section", { class: "stack" },
    h("h1", {}, "Invitation"),
    h("p", {}, `${inv.inviterDisplayName} invited you to ${what}.`),
    inv.status !== "pending" ? h("p", { class: "muted" }, `This invitation is ${inv.status}.`) : h("div", { class: "row" },
      h("button", { class: "btn btn-primary", onclick: async () => {
        try {
          await api("POST", `/v1/invitations/${encodeURIComponent(code)}/accept`);
          toast(`Joined ${inv.referenceName}`);
          await store.sync();
          location.hash = inv.type === "group" ? `#/groups/${encodeURIComponent(inv.referenceId)}` : "#/alarms";
        } catch (e) { err.textContent = errorText(e); }
      } }, "Accept"),
      inv.inviteeEmail ? h("button", { class: "btn", onclick: async () => { try { await api("POST", `/v1/invitations/${encodeURIComponent(code)}/decline`); location.hash = "#/alarms"; } catch (e) { err.textContent = errorText(e); } } }, "Decline") : null),
    err);
}
