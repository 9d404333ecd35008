"""Programs of array operations: statements, their text (what the runner reads) and what the
runner writes back.

A statement is `vN = OP ARGS...` (makes array vN), `vN <- OP ARGS...` (writes the result into
the live array vN: the output rule's given output), or `OP ARGS...` (fill, write, put,
destroy). Arguments are words: an array vK, a type name, an integer, a double as d:<bits in
hex>, bytes as x:<hex>, a text as s:<hex of its bytes>, a shape as [2,3] ([] for 0-d), a
where-scalar as TYPE:x:<hex>. README.md lists every operation."""

import struct


class Stmt:
    __slots__ = ("target", "given", "op", "args")

    def __init__(self, op, args, target=None, given=False):
        self.op = op
        self.args = list(args)
        self.target = target
        self.given = given

    def text(self):
        words = " ".join([self.op] + [str(a) for a in self.args])
        if self.target is None:
            return words
        return "v%d %s %s" % (self.target, "<-" if self.given else "=", words)

    def refs(self):
        """The arrays the statement reads or writes (the given output included)."""
        out = [int(a[1:]) for a in self.args if _is_var(a)]
        if self.given:
            out.append(self.target)
        return out

    def copy(self):
        return Stmt(self.op, list(self.args), self.target, self.given)


def _is_var(a):
    return isinstance(a, str) and len(a) > 1 and a[0] == "v" and a[1:].isdigit()


def var(k):
    return "v%d" % k


def f64(x):
    return "d:%016x" % struct.unpack("<Q", struct.pack("<d", float(x)))[0]


def unf64(word):
    return struct.unpack("<d", struct.pack("<Q", int(word[2:], 16)))[0]


def hexbytes(b):
    return "x:" + bytes(b).hex()


def unhex(word):
    return bytes.fromhex(word[2:])


def text(s):
    return "s:" + s.encode().hex()


def untext(word):
    return bytes.fromhex(word[2:]).decode()


def shape(sh):
    return "[" + ",".join(str(int(d)) for d in sh) + "]"


def unshape(word):
    inner = word[1:-1]
    return tuple(int(d) for d in inner.split(",")) if inner else ()


def program_text(name, stmts):
    return "program %s\n%s\nend\n" % (name, "\n".join(s.text() for s in stmts))


class Result:
    """What the runner wrote for one program: per statement ('skip' | 'bad' | (status, msg,
    type, shape)), a failure's message, the bytes it dumped after each statement, and the
    final arrays."""

    def __init__(self, name):
        self.name = name
        self.status = {}
        self.dumps = {}  # statement index -> (var, bytes)
        self.messages = {}  # statement index -> a failure's message
        self.final = {}  # var -> (type, shape, bytes)
        self.complete = False
        self.violations = 0  # the checking fake driver's count (None: not on it)
        self.violation = ""
        self.sync = 0  # cujit_synchronize()'s failure after the program, if any


def parse_results(lines):
    """The runner's output, program by program: a dict name -> Result (the last one
    incomplete when the runner died in it)."""
    results = {}
    cur, last = None, None
    for line in lines:
        w = line.split()
        if not w:
            continue
        if w[0] == "program":
            cur = Result(" ".join(w[1:]))
            results[cur.name] = cur
            last = None
        elif cur is None:
            continue
        elif w[0] == "end":
            cur.complete = True
            cur = None
        elif w[0] == "s":
            last = int(w[1])
            if w[2] in ("skip", "bad"):
                cur.status[last] = w[2]
            else:
                st, msg = int(w[2]), int(w[3])
                ty = w[4] if len(w) > 4 else None
                sh = unshape(w[5]) if len(w) > 5 else None
                cur.status[last] = (st, msg, ty, sh)
        elif w[0] == "m":
            cur.messages[last] = bytes.fromhex(w[1]).decode(errors="replace") \
                if len(w) > 1 else ""
        elif w[0] == "d":
            cur.dumps[last] = (int(w[1][1:]), _bytes(w[2]))
        elif w[0] == "f":
            cur.final[int(w[1][1:])] = (w[2], unshape(w[3]), _bytes(w[4]))
        elif w[0] == "x":
            cur.violations = int(w[1])
        elif w[0] == "x!":
            cur.violation = line.strip()[3:]
        elif w[0] == "y":
            cur.sync = int(w[1])
    return results


def _bytes(word):
    if word == "~":
        return None  # not read: a strided array on the checking fake driver
    if word == "-":
        return b""
    if word.startswith("!"):
        return word  # a failed read: its status
    return bytes.fromhex(word)
