# frozen_string_literal: true

require "redis"

module GoblinRedis
  # A store for rack-attack (Rack::Attack.cache.store) whose every count is one GOBLIN.INCREX:
  #
  #   Rack::Attack.cache.store = GoblinRedis::RackAttackStore.new(Redis.new)
  #
  # rack-attack's own Redis store counts with INCRBY then EXPIRE in a pipeline, two commands that
  # another client's can come between, and that a crash can split (a counter left without its
  # expiry). GOBLIN.INCREX counts and arms the window's expiry on its first hit in one step.
  #
  # The rest is rack-attack's Redis store, command for command: `read` is GET, `write` a SET with
  # the expiry (fail2ban's and allow2ban's bans), `delete` a DEL, `delete_matched` (Rack::Attack
  # .reset!) a SCAN and DEL. As that store does, it fails open: a server out of reach
  # (Redis::BaseConnectionError) reads as nil and counts as nothing, so that requests go through.
  # A server without the module is a ModuleError, which is no connection error: a deployment that
  # forgot the module fails loudly, at its first request.
  class RackAttackStore
    # `redis`: the application's Redis, or a ConnectionPool of them (Rails.cache.redis).
    def initialize(redis)
      @redis = Arguments.client!(redis)
    end

    # The client it was given.
    attr_reader :redis

    def read(key, _options = nil)
      rescuing { core { |redis| redis.get(key) } }
    end

    # `expires_in` in seconds (an Integer, a Float, an ActiveSupport::Duration), to the millisecond.
    def write(key, value, options = {})
      expires_in = options[:expires_in]
      rescuing do
        core do |redis|
          expires_in ? redis.set(key, value, px: milliseconds(expires_in)) : redis.set(key, value)
        end
      end
    end

    # `amount` (1 from rack-attack) added to the counter at `key`, whose window of `expires_in`
    # seconds starts at its first hit; the count. One GOBLIN.INCREX.
    def increment(key, amount = 1, options = {})
      Arguments.integer!(:amount, amount, 1)
      expires_in = options[:expires_in]
      rescuing do
        if expires_in
          GoblinRedis.call(@redis, Commands.increx(key, seconds(expires_in), cost: amount))
        else
          core { |redis| redis.incrby(key, amount) }
        end
      end
    end

    def delete(key, _options = nil)
      rescuing { core { |redis| redis.del(key) } }
    end

    # Every key matching the glob `matcher`, found with SCAN (never KEYS) and deleted in batches.
    def delete_matched(matcher, _options = nil)
      rescuing do
        core do |redis|
          redis.scan_each(match: matcher, count: 1000).each_slice(1000) { |keys| redis.del(*keys) }
        end
      end
    end

    private

    # A core command's client, after the module check, so that a store on a server without Goblin
    # says so at its first call, whichever it is.
    def core
      @redis.with do |redis|
        Connection.check(redis)
        yield redis
      end
    end

    def rescuing
      yield
    rescue Redis::BaseConnectionError
      nil
    end

    # Whole seconds, rounded up: a window never ends before rack-attack asked.
    def seconds(value)
      value.is_a?(Integer) ? value : value.to_f.ceil
    end

    def milliseconds(value)
      (value.to_f * 1000).ceil
    end
  end
end
