# frozen_string_literal: true

module GoblinRedis
  # One rate-limit decision: allowed or not, the quota, what is left of it, and when to come back
  # (seconds, rounded up; `retry_after` nil when allowed).
  Decision = Struct.new(:allowed, :limit, :remaining, :retry_after, :reset_after, keyword_init: true) do
    def allowed?
      allowed
    end

    # The IETF RateLimit header fields of the decision, and Retry-After on a refusal.
    def headers
      fields = {
        "RateLimit-Limit" => limit.to_s,
        "RateLimit-Remaining" => remaining.to_s,
        "RateLimit-Reset" => reset_after.to_s
      }
      fields["Retry-After"] = retry_after.to_s unless allowed
      fields
    end
  end

  # Rate limiters whose every decision is one Goblin command, on the server's clock, each
  # `call(key, cost: 1)` giving a Decision:
  #
  #   limiter = GoblinRedis::Limiter::GCRA.new(redis, burst: 10, rate: 5, period: 1)
  #   decision = limiter.call("api:user42")
  #   return [429, decision.headers, []] unless decision.allowed?
  module Limiter
    # The Generic Cell Rate Algorithm (GOBLIN.GCRA): `burst + 1` requests at once, then `rate`
    # more every `period` seconds. A refused request is not counted.
    class GCRA
      attr_reader :burst, :rate, :period

      def initialize(redis, burst:, rate:, period:)
        @redis = Arguments.client!(redis)
        @burst = Arguments.integer!(:burst, burst, 0)
        @rate = Arguments.integer!(:rate, rate, 1)
        @period = Arguments.seconds!(:period, period)
      end

      def call(key, cost: 1)
        command = Commands.gcra(key, @burst, @rate, @period.to_f, tokens: Arguments.integer!(:cost, cost, 1))
        limited, limit, remaining, retry_after, reset_after = GoblinRedis.call(@redis, command)
        Decision.new(allowed: limited.zero?, limit:, remaining:, retry_after: limited.zero? ? nil : retry_after,
                     reset_after:)
      end
    end

    # A fixed window (GOBLIN.FWINDOW): at most `limit` in `period` seconds from the window's first
    # request, on the server's clock. A refused request is counted too, as rack-attack's throttle
    # counts it.
    class FixedWindow
      attr_reader :limit, :period

      def initialize(redis, limit:, period:)
        @redis = Arguments.client!(redis)
        @limit = Arguments.integer!(:limit, limit, 1)
        @period = Arguments.seconds!(:period, period)
      end

      def call(key, cost: 1)
        command = Commands.fwindow(key, (@period * 1000).round, by: Arguments.integer!(:cost, cost, 1))
        count, ttl_ms = GoblinRedis.call(@redis, command)
        reset_after = ttl_ms.negative? ? 0 : (ttl_ms / 1000.0).ceil
        allowed = count <= @limit
        Decision.new(allowed:, limit: @limit, remaining: [@limit - count, 0].max,
                     retry_after: allowed ? nil : reset_after, reset_after:)
      end
    end
  end
end
