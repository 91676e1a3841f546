# frozen_string_literal: true

module GoblinRedis
  # The command vocabulary, once: every Goblin command the gem sends is built here, as the array
  # of arguments redis-rb's `call` takes. The store, the limiters and the lock are thin shells over
  # it; an application can send any of them itself with GoblinRedis.call.
  module Commands
    module_function

    # GOBLIN.INCREX: count `cost` in a fixed window of `seconds`, armed on the window's first hit.
    def increx(key, seconds, cost: 1)
      command = ["GOBLIN.INCREX", key, seconds]
      cost == 1 ? command : command.push("COST", cost)
    end

    # GOBLIN.FWINDOW: count `by` in a fixed window of `window_ms` milliseconds; replies
    # [count, ttl_ms].
    def fwindow(key, window_ms, by: 1)
      command = ["GOBLIN.FWINDOW", key, window_ms]
      by == 1 ? command : command.push("BY", by)
    end

    # GOBLIN.GCRA: replies [limited, limit, remaining, retry_after, reset_after].
    def gcra(key, max_burst, tokens_per_period, period, tokens: 1)
      command = ["GOBLIN.GCRA", key, max_burst, tokens_per_period, period]
      tokens == 1 ? command : command.push("TOKENS", tokens)
    end

    # GOBLIN.LOCK: take the lock now, or nil; with `fence`, the grant's fencing token.
    def lock(key, token, milliseconds, fence: true)
      with_fence(["GOBLIN.LOCK", key, token, milliseconds], fence)
    end

    # GOBLIN.BLOCK: wait in line up to `timeout` seconds (0: for ever), or nil.
    def block(key, token, milliseconds, timeout, fence: true)
      with_fence(["GOBLIN.BLOCK", key, token, milliseconds, timeout], fence)
    end

    # GOBLIN.EXTEND ... REPLACE: the holder's lease is `milliseconds` from now; 0 if not held.
    def extend_lease(key, token, milliseconds, fence: true)
      with_fence(["GOBLIN.EXTEND", key, token, milliseconds, "REPLACE"], fence)
    end

    # GOBLIN.CAD: release if `token` holds it; 1 released, 0 not held.
    def cad(key, token)
      ["GOBLIN.CAD", key, token]
    end

    def with_fence(command, fence)
      fence ? command.push("FENCE") : command
    end
    private_class_method :with_fence
  end
end
