/**
 * Qdrant local fixtures written by Python's own pickle (python3's stdlib; qdrant-client and
 * pydantic are not installable here): meta.json and collection/<name>/storage.sqlite exactly as
 * qdrant_client/local/qdrant_local.py and local/persistence.py write them — key
 * base64(pickle.dumps(id)), value pickle.dumps(PointStruct) at the default protocol. PointStruct is
 * a stand-in class registered as qdrant_client.http.models.models.PointStruct whose __getstate__
 * returns what pydantic v2's BaseModel.__getstate__ returns, so the bytes are those of a real
 * pydantic v2 pickle (STACK_GLOBAL, EMPTY_TUPLE, NEWOBJ, state dict, BUILD).
 */
import { spawnSync } from 'node:child_process'

export interface QPoint {
  id: string | number
  vector: number[] | Record<string, number[]> | null
  payload: Record<string, unknown>
}

const SCRIPT = String.raw`
import base64, json, os, pickle, sqlite3, sys, types
spec = json.load(sys.stdin)
for name in ['qdrant_client', 'qdrant_client.http', 'qdrant_client.http.models', 'qdrant_client.http.models.models']:
    sys.modules[name] = types.ModuleType(name)
mod = sys.modules['qdrant_client.http.models.models']
class PointStruct:
    def __init__(self, id, vector, payload):
        self.id = id; self.vector = vector; self.payload = payload
    def __getstate__(self):
        return {'__dict__': self.__dict__, '__pydantic_extra__': None,
                '__pydantic_fields_set__': {'id', 'vector', 'payload'}, '__pydantic_private__': None}
PointStruct.__module__ = 'qdrant_client.http.models.models'
PointStruct.__qualname__ = 'PointStruct'
mod.PointStruct = PointStruct
class Evil:
    def __reduce__(self):
        return (os.system, ('touch ' + spec['marker'],))
root = spec['dir']
os.makedirs(os.path.join(root, 'collection'), exist_ok=True)
meta = {'collections': {}, 'aliases': {}}
for cname, c in spec['collections'].items():
    meta['collections'][cname] = {'vectors': c['vectors'], 'shard_number': None, 'sparse_vectors': None}
    d = os.path.join(root, 'collection', cname)
    os.makedirs(d, exist_ok=True)
    con = sqlite3.connect(os.path.join(d, 'storage.sqlite'))
    con.execute('CREATE TABLE IF NOT EXISTS points (id TEXT PRIMARY KEY, point BLOB)')
    for p in c['points']:
        v = p['vector']
        # JSON has no float type for 1.0: pydantic's List[StrictFloat] holds floats, so do we
        if isinstance(v, list): v = [float(x) for x in v]
        elif isinstance(v, dict): v = {k: [float(x) for x in xs] for k, xs in v.items()}
        p['vector'] = v
        key = base64.b64encode(pickle.dumps(p['id'])).decode('utf-8')
        con.execute('INSERT OR REPLACE INTO points VALUES (?, ?)', (key, sqlite3.Binary(pickle.dumps(PointStruct(p['id'], p['vector'], p['payload'])))))
    if c.get('evil'):
        con.execute('INSERT OR REPLACE INTO points VALUES (?, ?)', ('evil', sqlite3.Binary(pickle.dumps(Evil()))))
    con.commit(); con.close()
with open(os.path.join(root, 'meta.json'), 'w') as f:
    f.write(json.dumps(meta))
`

/** True when python3 can write the fixture (a user's machine may lack it; the test then says so). */
export function hasPython(): boolean {
  return spawnSync('python3', ['-c', 'import pickle, sqlite3'], { encoding: 'utf8' }).status === 0
}

export function buildQdrantLocal(dir: string, collections: Record<string, { vectors: unknown; points: QPoint[]; evil?: boolean }>, marker: string): void {
  const r = spawnSync('python3', ['-c', SCRIPT], { input: JSON.stringify({ dir, collections, marker }), encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`python3 could not write the Qdrant fixture: ${r.stderr}`)
}
