# frozen_string_literal: true

require "redis"

module GoblinRedis
  # A store for rack-attack (Rack::Attack.cache.store) whose every count is one GOBLIN.INCREX,
  # beneath whichever Redis-backed store the application has:
  #
  #   Rack::Attack.cache.store = GoblinRedis::RackAttackStore.new(Redis.new)
  #   Rack::Attack.cache.store = GoblinRedis::RackAttackStore.new(Rails.cache)   # RedisCacheStore
  #
  # rack-attack's own Redis stores count with INCRBY then EXPIRE, two commands that another
  # client's can come between, and that a crash can split (a counter left without its expiry).
  # GOBLIN.INCREX counts and arms the window's expiry on its first hit in one step.
  #
  # The rest is what rack-attack's own proxy for that store does: `read` and `write` raw (a ban is
  # the string "1", never a serialized object), `delete`, `delete_matched` (Rack::Attack.reset!).
  # On a Redis or a Redis::Store (the redis-store gem), or a ConnectionPool of them, those are
  # GET, SET with the expiry, DEL, and SCAN with DEL, sent raw, on the keys the client names
  # (a Redis::Store's namespace); on an ActiveSupport cache store on Redis (Rails'
  # RedisCacheStore, redis-activesupport's RedisStore) they are the cache store's own calls with
  # `raw: true`, and a count goes to its connection under the key it names (its namespace). As
  # those stores do, it fails open: a server out of reach (Redis::BaseConnectionError) reads as
  # nil and counts as nothing, so that requests go through. A server without the module is a
  # ModuleError, which is no connection error: a deployment that forgot the module fails loudly,
  # at its first request.
  #
  # Any other method is the store's it was given, as with rack-attack's proxies
  # (`Rack::Attack.cache.store.flushdb`, `.clear`).
  class RackAttackStore
    # `store`: the application's Redis, Redis::Store or ConnectionPool of them, or an
    # ActiveSupport cache store on Redis (ActiveSupport::Cache::RedisCacheStore, pooled or not;
    # ActiveSupport::Cache::RedisStore). Anything else is a TypeError.
    def initialize(store)
      @store = store
      @cache = store if cache_store?(store)
      @redis = connection(store)
    end

    # The client, or ConnectionPool, that counts are sent on: the one given, or the cache store's.
    attr_reader :redis

    def read(key, _options = nil)
      rescuing do
        return checked { @cache.read(key, raw: true) } if @cache

        core { |redis| redis.call("GET", named(redis, key)) }
      end
    end

    # `expires_in` in seconds (an Integer, a Float, an ActiveSupport::Duration), to the millisecond
    # (a cache store keeps it as it keeps its own).
    def write(key, value, options = {})
      expires_in = options[:expires_in]
      rescuing do
        return checked { @cache.write(key, value, **{ raw: true, expires_in: }.compact) } if @cache

        core do |redis|
          set = ["SET", named(redis, key), value.to_s]
          set.push("PX", milliseconds(expires_in)) if expires_in
          redis.call(*set)
        end
      end
    end

    # `amount` (1 from rack-attack) added to the counter at `key`, whose window of `expires_in`
    # seconds starts at its first hit; the count. One GOBLIN.INCREX.
    def increment(key, amount = 1, options = {})
      Arguments.integer!(:amount, amount, 1)
      rescuing { core { |redis| count(redis, named(redis, key), amount, options[:expires_in]) } }
    end

    def delete(key, _options = nil)
      rescuing do
        return checked { @cache.delete(key) } if @cache

        core { |redis| redis.call("DEL", named(redis, key)) }
      end
    end

    # Every key matching the glob `matcher`, found with SCAN (never KEYS) and deleted in batches.
    def delete_matched(matcher, _options = nil)
      rescuing do
        return checked { @cache.delete_matched(matcher) } if @cache

        core { |redis| delete_matching(redis, named(redis, matcher)) }
      end
    end

    # The store's own methods, as rack-attack's proxies answer them.
    def respond_to_missing?(name, include_private = false)
      @store.respond_to?(name, include_private) || super
    end

    def method_missing(name, ...)
      return super unless @store.respond_to?(name)

      @store.public_send(name, ...)
    end

    private

    # One GOBLIN.INCREX; an INCRBY for a count without a window.
    def count(redis, name, amount, expires_in)
      return redis.call("INCRBY", name, amount) unless expires_in

      Connection.send_checked(redis, Commands.increx(name, seconds(expires_in), cost: amount))
    end

    def delete_matching(redis, pattern)
      cursor = "0"
      loop do
        cursor, keys = redis.call("SCAN", cursor, "MATCH", pattern, "COUNT", 1000)
        redis.call("DEL", *keys) unless keys.empty?
        break if cursor == "0"
      end
    end

    def cache_store?(store)
      defined?(::ActiveSupport::Cache::Store) && store.is_a?(::ActiveSupport::Cache::Store)
    end

    # The client or pool of `store`: itself, or a cache store's (RedisCacheStore#redis; a
    # redis-activesupport RedisStore yields its Redis::Store from `with`).
    def connection(store)
      store = store.redis if @cache.respond_to?(:redis)
      return store if store.respond_to?(:with)

      raise TypeError, "expected a Redis, a Redis::Store, a ConnectionPool of them, or an ActiveSupport cache " \
                       "store on Redis (RedisCacheStore, redis-activesupport's RedisStore), not #{@store.class}"
    end

    # A core command's client, after the module check, so that a store on a server without Goblin
    # says so at its first call, whichever it is.
    def core
      @redis.with do |redis|
        Connection.check(redis)
        yield redis
      end
    end

    # A call of the cache store, after the module check on its connection.
    def checked
      @redis.with { |redis| Connection.check(redis) }
      yield
    end

    # The key `key` is on the server: as the cache store names it (its namespace; ActiveSupport
    # keeps that method private), then as a Redis::Store names it (its namespace, which it keeps
    # private too). A plain Redis names it as it is.
    def named(redis, key)
      key = @cache.send(:normalize_key, key, nil) if @cache
      return redis.send(:interpolate, key) if defined?(::Redis::Store) && redis.is_a?(::Redis::Store)

      key
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
