/**
 * Chroma persistent-store fixtures, written by python3's stdlib in Chroma's own formats (chromadb
 * is not installable here): chroma.sqlite3 with the tables its migrations leave (sysdb collections /
 * segments, metadb embeddings / embedding_metadata, the embeddings_queue), and the HNSW segment
 * folder as chroma-hnswlib 0.7 persists it (header.bin, data_level0.bin, length.bin, link_lists.bin)
 * with index_metadata.pickle pickled from a stand-in registered as
 * chromadb.segment.impl.vector.local_persistent_hnsw.PersistentData (plain attributes, as Chroma's).
 */
import { spawnSync } from 'node:child_process'

export interface ChromaRecord {
  id: string
  document: string | null
  metadata: Record<string, string | number | boolean>
  embedding: number[]
  /** marked deleted in the HNSW index (and gone from the metadata segment) */
  deleted?: boolean
  /** still in embeddings_queue, not yet in the HNSW files */
  queuedOnly?: boolean
  createdAt: string
}

const SCRIPT = String.raw`
import json, os, pickle, sqlite3, struct, sys, types, uuid
spec = json.load(sys.stdin)
root = spec['dir']; os.makedirs(root, exist_ok=True)
for name in ['chromadb', 'chromadb.segment', 'chromadb.segment.impl', 'chromadb.segment.impl.vector', 'chromadb.segment.impl.vector.local_persistent_hnsw']:
    sys.modules[name] = types.ModuleType(name)
class PersistentData:
    def __init__(self, dimensionality, total_elements_added, id_to_label, label_to_id, id_to_seq_id):
        self.dimensionality = dimensionality; self.total_elements_added = total_elements_added
        self.max_seq_id = -1; self.id_to_label = id_to_label; self.label_to_id = label_to_id; self.id_to_seq_id = id_to_seq_id
PersistentData.__module__ = 'chromadb.segment.impl.vector.local_persistent_hnsw'
sys.modules['chromadb.segment.impl.vector.local_persistent_hnsw'].PersistentData = PersistentData
con = sqlite3.connect(os.path.join(root, 'chroma.sqlite3'))
con.executescript('''
CREATE TABLE collections (id TEXT PRIMARY KEY, name TEXT NOT NULL, dimension INTEGER, database_id TEXT NOT NULL, config_json_str TEXT, UNIQUE (name, database_id));
CREATE TABLE segments (id TEXT PRIMARY KEY, type TEXT NOT NULL, scope TEXT NOT NULL, collection TEXT REFERENCES collections(id));
CREATE TABLE embeddings (id INTEGER PRIMARY KEY, segment_id TEXT NOT NULL, embedding_id TEXT NOT NULL, seq_id BLOB NOT NULL, created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, UNIQUE (segment_id, embedding_id));
CREATE TABLE embedding_metadata (id INTEGER REFERENCES embeddings(id), key TEXT NOT NULL, string_value TEXT, int_value INTEGER, float_value REAL, bool_value INTEGER, PRIMARY KEY (id, key));
CREATE TABLE max_seq_id (segment_id TEXT PRIMARY KEY, seq_id BLOB NOT NULL);
CREATE TABLE embeddings_queue (seq_id INTEGER PRIMARY KEY, created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, operation INTEGER NOT NULL, topic TEXT NOT NULL, id TEXT NOT NULL, vector BLOB, encoding TEXT, metadata TEXT);
''')
seq = 0
for cname, c in spec['collections'].items():
    cid = str(uuid.uuid5(uuid.NAMESPACE_DNS, 'c-' + cname)); vseg = str(uuid.uuid5(uuid.NAMESPACE_DNS, 'v-' + cname)); mseg = str(uuid.uuid5(uuid.NAMESPACE_DNS, 'm-' + cname))
    dim = c['dim']
    con.execute('INSERT INTO collections VALUES (?, ?, ?, ?, ?)', (cid, cname, dim, '00000000-0000-0000-0000-000000000000', '{}'))
    con.execute('INSERT INTO segments VALUES (?, ?, ?, ?)', (vseg, 'urn:chroma:segment/vector/hnsw-local-persisted', 'VECTOR', cid))
    con.execute('INSERT INTO segments VALUES (?, ?, ?, ?)', (mseg, 'urn:chroma:segment/metadata/sqlite', 'METADATA', cid))
    # HNSW: M = 16 → maxM0 = 32; level-0 links: 4 + 32*4 bytes; then the vector, then the size_t label
    maxM0 = 32; links0 = 4 + maxM0 * 4; data = dim * 4; per = links0 + data + 8
    in_index = [r for r in c['records'] if not r.get('queuedOnly')]
    hdir = os.path.join(root, vseg); os.makedirs(hdir)
    max_elements = max(len(in_index), 1) + 3
    level0 = bytearray(max_elements * per)
    id_to_label = {}; label_to_id = {}; id_to_seq = {}
    for i, r in enumerate(in_index):
        label = i + 1
        off = i * per
        struct.pack_into('<I', level0, off, 0)
        if r.get('deleted'): level0[off + 2] |= 0x01
        struct.pack_into('<%df' % dim, level0, off + links0, *r['embedding'])
        struct.pack_into('<Q', level0, off + links0 + data, label)
        id_to_label[r['id']] = label; label_to_id[label] = r['id']; id_to_seq[r['id']] = i + 1
    with open(os.path.join(hdir, 'header.bin'), 'wb') as f:
        f.write(struct.pack('<iQQQQQQiIQQQdQ', 1, 0, max_elements, len(in_index), per, links0 + data, links0, 0, 0, 16, maxM0, 16, 1 / 2.772588722239781, 100))
    with open(os.path.join(hdir, 'data_level0.bin'), 'wb') as f: f.write(bytes(level0))
    with open(os.path.join(hdir, 'length.bin'), 'wb') as f: f.write(b'\0' * (max_elements * 4))
    with open(os.path.join(hdir, 'link_lists.bin'), 'wb') as f: f.write(struct.pack('<I', 0) * len(in_index))
    with open(os.path.join(hdir, 'index_metadata.pickle'), 'wb') as f:
        pickle.dump(PersistentData(dim, len(in_index), id_to_label, label_to_id, id_to_seq), f, pickle.HIGHEST_PROTOCOL)
    for r in c['records']:
        seq += 1
        if r.get('queuedOnly'):
            con.execute('INSERT INTO embeddings_queue (seq_id, created_at, operation, topic, id, vector, encoding, metadata) VALUES (?, ?, 0, ?, ?, ?, ?, ?)',
                        (seq, r['createdAt'], 'persistent://default/default/' + cid, r['id'], struct.pack('<%df' % dim, *r['embedding']), 'FLOAT32', json.dumps(r['metadata'])))
        if r.get('deleted'): continue
        cur = con.execute('INSERT INTO embeddings (segment_id, embedding_id, seq_id, created_at) VALUES (?, ?, ?, ?)', (mseg, r['id'], struct.pack('>Q', seq), r['createdAt']))
        rid = cur.lastrowid
        if r['document'] is not None:
            con.execute('INSERT INTO embedding_metadata (id, key, string_value) VALUES (?, ?, ?)', (rid, 'chroma:document', r['document']))
        for k, v in r['metadata'].items():
            if isinstance(v, bool): con.execute('INSERT INTO embedding_metadata (id, key, bool_value) VALUES (?, ?, ?)', (rid, k, 1 if v else 0))
            elif isinstance(v, int): con.execute('INSERT INTO embedding_metadata (id, key, int_value) VALUES (?, ?, ?)', (rid, k, v))
            elif isinstance(v, float): con.execute('INSERT INTO embedding_metadata (id, key, float_value) VALUES (?, ?, ?)', (rid, k, v))
            else: con.execute('INSERT INTO embedding_metadata (id, key, string_value) VALUES (?, ?, ?)', (rid, k, v))
con.commit(); con.close()
`

export function buildChroma(dir: string, collections: Record<string, { dim: number; records: ChromaRecord[] }>): void {
  const r = spawnSync('python3', ['-c', SCRIPT], { input: JSON.stringify({ dir, collections }), encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`python3 could not write the Chroma fixture: ${r.stderr}`)
}
