// Sessions kept in memory and written whole to a JSON file after every change, so that a
// restarted process finds them (write to a temporary file, then rename: never half a file).
import fs from "node:fs";

export class Store {
  constructor(path, { keepArchived = true } = {}) {
    this.path = path;
    this.keepArchived = keepArchived; // false: the `persistence` break, archive state not saved
    this.sessions = new Map(); // id -> {id, cwd, title, archived, order, updatedAt, history}
    this.deleted = new Set(); // ids that existed once: they stay unknown
    this.next = 1;
    if (path && fs.existsSync(path)) {
      const data = JSON.parse(fs.readFileSync(path, "utf8"));
      for (const s of data.sessions) this.sessions.set(s.id, s);
      for (const id of data.deleted) this.deleted.add(id);
      this.next = data.next;
    }
  }

  create(cwd) {
    const order = this.next++;
    const session = {
      id: `ts_${process.pid}_${order}_${Math.random().toString(36).slice(2, 8)}`,
      cwd,
      title: null,
      archived: false,
      order,
      updatedAt: new Date().toISOString(),
      history: [],
    };
    this.sessions.set(session.id, session);
    this.save();
    return session;
  }

  save() {
    if (!this.path) return;
    const sessions = [...this.sessions.values()].map((s) => (this.keepArchived ? s : { ...s, archived: false }));
    const tmp = `${this.path}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify({ next: this.next, sessions, deleted: [...this.deleted] }));
    fs.renameSync(tmp, this.path);
  }
}
