"""
A sweep computed in parts: contiguous beam ranges that give the bytes of the whole sweep.

Almost everything in a sweep is per beam, so a part (beams b0..b1) can be computed on its own.
Four things cross the part boundaries, and a part gets them from a *peer*:

- the running float sum of the foliage log transmissions (a cumulative sum in hit order);
- the clutter stream: one Poisson array over every clutter cell of the sweep, then one
  exponential array over every drop; a part draws its share when the part before it is done;
- the noise stream: (n_echoes, 2) normals in beam order, drawn the same way;
- the global minimum and maximum contribution range (the (beam, range) sort key).

Part k receives a carried value from part k - 1 and sends its own on to part k + 1. With one
part (``Solo``) nothing is sent and each value starts from its initial state: that is the plain
sweep. ``worker.ScanProcess`` runs the parts in child processes and routes the values between
them. Floating-point sums are sequential and generators draw in order, so the parts reproduce the
whole sweep bit for bit.
"""


class Solo:
    """The peer of a sweep computed in one part: nothing crosses a boundary."""

    part, parts = 0, 1

    def receive(self, name):
        """Never called for one part (there is no part before it)."""
        raise RuntimeError(f'a single part has no peer to receive {name!r} from')

    def send(self, name, part, value):
        """Never called for one part (there is no part after it)."""
        raise RuntimeError(f'a single part has no peer to send {name!r} to')

    def minmax(self, lo, hi):
        """Return (lo, hi): this part is the whole sweep."""
        return lo, hi


SOLO = Solo()


def in_turn(peer, name, first, step):
    """
    Run value = step(value) once per part, in part order, and return this part's result.

    first() gives part 0's starting value (the others receive theirs from the part before);
    step returns (value to pass on, result). The last part's value goes nowhere.
    """
    value = first() if peer.part == 0 else peer.receive(name)
    value, result = step(value)
    if peer.part + 1 < peer.parts:
        peer.send(name, peer.part + 1, value)
    return result, value


def draw_in_turn(peer, name, rng, draw):
    """
    Return draw(generator) for this part's share of a stream that spans the whole sweep.

    Part 0 draws from rng; each later part from the generator the part before it left. Returns
    (values, generator after this part's draws).
    """
    def step(generator):
        values = draw(generator)
        return generator, values

    return in_turn(peer, name, lambda: rng, step)


def wrap_to_first(peer, name, value):
    """
    Hand the last part's final value of a stream to part 0, which continues the stream from it.

    value is this part's final value. Returns what part 0 continues from: with one part its own
    value, in part 0 the last part's, in the other parts None.
    """
    if peer.parts == 1:
        return value
    if peer.part == peer.parts - 1:
        peer.send(name, 0, value)
    return peer.receive(name) if peer.part == 0 else None
