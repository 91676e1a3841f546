# frozen_string_literal: true

require_relative "test_helper"
require "rack"
require "rack/test"
require "rack/attack"
require "connection_pool"
require "redis-store"
require "active_support"
require "active_support/cache"
require "active_support/cache/redis_cache_store"
require "redis-activesupport"

# GoblinRedis::RackAttackStore beneath rack-attack: throttle, fail2ban, allow2ban and track, each
# scenario run on the store and on rack-attack's own Redis store (a plain Redis, on the server
# without the module) with the same expectations, so that the store is proven to work as the
# stock one does; the same beneath every kind of store rack-attack's own specs give it (Redis,
# Redis::Store, Rails' RedisCacheStore pooled or not, redis-activesupport's RedisStore, and
# ConnectionPools), beside rack-attack's own proxy for each; then what only the store does (one
# command a count, atomic under threads).
class RackAttackTest < GoblinCase
  include Rack::Test::Methods

  # What a notifier (ActiveSupport::Notifications' place) was told.
  class Events
    attr_reader :names

    def initialize
      @names = []
    end

    def instrument(name, _payload)
      @names << name
    end
  end

  def app
    Rack::Builder.new do
      use Rack::Lint
      use Rack::Attack
      use Rack::Lint
      run ->(_env) { [200, { "Content-Type" => "text/plain" }, ["Hello"]] }
    end.to_app
  end

  def setup
    super
    @bare = GoblinTest.bare
    @bare.flushdb
    Rack::Attack.reset_cache_for_tests if Rack::Attack.respond_to?(:reset_cache_for_tests)
  end

  def teardown
    Rack::Attack.clear_configuration
    Rack::Attack.notifier = nil
    @bare.close
    super
  end

  # The block once on rack-attack's own Redis store and once on GoblinRedis::RackAttackStore,
  # each given the client its keys are on.
  def on_both_stores
    { stock: @bare, goblin: GoblinRedis::RackAttackStore.new(@redis) }.each do |label, store|
      Rack::Attack.clear_configuration
      Rack::Attack.cache.store = store
      yield label, label == :stock ? @bare : @redis
    end
  end

  def statuses(*requests)
    requests.map do |path, ip = "1.2.3.4"|
      get path, {}, "REMOTE_ADDR" => ip
      last_response.status
    end
  end

  def pttl_of(redis, pattern)
    keys = redis.scan_each(match: pattern).to_a
    assert_equal 1, keys.size, "one key for #{pattern}: #{keys}"
    redis.pttl(keys.first)
  end

  def test_throttle_refuses_past_the_limit_per_discriminator
    on_both_stores do |label, redis|
      Rack::Attack.throttle("by ip", limit: 2, period: 60, &:ip)

      assert_equal [200, 200, 429, 429, 200], statuses(["/"], ["/"], ["/"], ["/"], ["/", "5.6.7.8"]), label
      # The window's counter expires by the end of its period (rack-attack adds a second).
      assert_includes 1..61_000, pttl_of(redis, "rack::attack:*:by ip:1.2.3.4"), label
    end
  end

  def test_fail2ban_bans_after_maxretry_and_the_ban_expires_by_bantime
    on_both_stores do |label, redis|
      Rack::Attack.blocklist("pentesters") do |request|
        Rack::Attack::Fail2Ban.filter(request.ip, maxretry: 2, findtime: 30, bantime: 60) do
          request.path.include?("private")
        end
      end

      assert_equal [200, 403, 403, 403], statuses(["/"], ["/private"], ["/private"], ["/"]), label
      assert_includes 1..60_000, pttl_of(redis, "rack::attack:fail2ban:ban:1.2.3.4"), label
      assert_equal [200], statuses(["/", "5.6.7.8"]), label
    end
  end

  def test_allow2ban_allows_maxretry_then_bans
    on_both_stores do |label, _redis|
      Rack::Attack.blocklist("scarce") do |request|
        Rack::Attack::Allow2Ban.filter(request.ip, maxretry: 2, findtime: 30, bantime: 60) do
          request.path.include?("scarce")
        end
      end

      assert_equal [200, 200, 200, 403, 403], statuses(["/"], ["/scarce"], ["/scarce"], ["/scarce"], ["/"]), label
    end
  end

  def test_track_counts_every_request_and_reports_past_the_limit
    on_both_stores do |label, _redis|
      events = Rack::Attack.notifier = Events.new
      Rack::Attack.track("posts", limit: 2, period: 60) { |request| request.ip if request.post? }

      counts = Array.new(3) do
        post "/", {}, "REMOTE_ADDR" => "1.2.3.4"
        assert_equal 200, last_response.status, label
        last_request.env["rack.attack.throttle_data"]["posts"][:count]
      end

      assert_equal [1, 2, 3], counts, label
      assert_equal ["track.rack_attack", "rack.attack"], events.names, label
    end
  end

  def test_a_window_ends_and_counting_starts_again
    on_both_stores do |label, redis|
      Rack::Attack.throttle("by ip", limit: 1, period: 1, &:ip)

      assert_equal [200, 429], statuses(["/"], ["/"]), label
      keys = redis.scan_each(match: "rack::attack:*").to_a
      GoblinTest.wait_for(5) { keys.none? { |key| redis.exists?(key) } }
      assert_empty redis.scan_each(match: "rack::attack:*").to_a, "#{label}: no key left behind"
      GoblinTest.wait_for(5) { statuses(["/"]) == [200] }
    end
  end

  def test_reset_deletes_rack_attacks_keys_only
    on_both_stores do |label, redis|
      Rack::Attack.throttle("by ip", limit: 5, period: 60, &:ip)
      statuses(["/"], ["/", "5.6.7.8"])
      redis.set("app:key", "kept")

      Rack::Attack.reset!

      assert_empty redis.scan_each(match: "rack::attack:*").to_a, label
      assert_equal "kept", redis.get("app:key"), label
    end
  end

  # Every kind of store rack-attack's own specs put beneath it, each on the server at `address`
  # under its own namespace where it has one: [label, the store, the namespace's prefix of its
  # keys, whether rack-attack has a proxy of its own for it].
  def kinds_of_store(address)
    host, port = address.split(":")
    url = "redis://#{address}"
    redis = -> { Redis.new(host:, port: Integer(port)) }
    redis_store = -> { Redis::Store.new(host:, port: Integer(port), namespace: "app") }
    [
      ["Redis", redis.call, "", true],
      ["Redis::Store", redis_store.call, "app:", true],
      ["RedisCacheStore", ActiveSupport::Cache::RedisCacheStore.new(url:, namespace: "rc"), "rc:", true],
      ["RedisCacheStore (pooled)", ActiveSupport::Cache::RedisCacheStore.new(url:, pool_size: 2), "", true],
      ["ActiveSupport::Cache::RedisStore", ActiveSupport::Cache::RedisStore.new(url, namespace: "as"), "as:", true],
      ["ConnectionPool of Redis", ConnectionPool.new(size: 2, &redis), "", false],
      ["ConnectionPool of Redis::Store", ConnectionPool.new(size: 2, &redis_store), "app:", false]
    ]
  end

  # What rack-attack's cache-backed features come to, on the store set now: a throttle's, a
  # Fail2Ban's and an Allow2Ban's statuses, the throttle's count read back through the store, and
  # what Rack::Attack.reset! leaves.
  def features(client, prefix)
    Rack::Attack.clear_configuration
    Rack::Attack.throttle("by ip", limit: 1, period: 60, &:ip)
    throttled = statuses(["/"], ["/"], ["/", "5.6.7.8"])
    epoch = Rack::Attack.cache.last_epoch_time / 60
    count_key = "rack::attack:#{epoch}:by ip:1.2.3.4"
    read_back = Rack::Attack.cache.store.read(count_key)
    Rack::Attack.clear_configuration
    Rack::Attack.blocklist("fail2ban") do |request|
      Rack::Attack::Fail2Ban.filter(request.ip, maxretry: 2, findtime: 30, bantime: 60) { request.path == "/private" }
    end
    banned = statuses(["/"], ["/private"], ["/private"], ["/"])
    Rack::Attack.clear_configuration
    Rack::Attack.blocklist("allow2ban") do |request|
      Rack::Attack::Allow2Ban.filter(request.ip, maxretry: 2, findtime: 30, bantime: 60) { request.path == "/scarce" }
    end
    allowed = statuses(["/", "9.9.9.9"], ["/scarce", "9.9.9.9"], ["/scarce", "9.9.9.9"], ["/scarce", "9.9.9.9"])
    keys = client.scan_each(match: "*rack::attack*").to_a.sort
    count_ttl = client.pttl("#{prefix}#{count_key}")
    Rack::Attack.reset!
    left = client.scan_each(match: "*rack::attack*").to_a
    { throttled:, read_back:, banned:, allowed:, count_ttl:, keys:, left: }
  end

  def assert_features(label, prefix, ours)
    assert_equal [200, 429, 200], ours[:throttled], label
    assert_equal "2", ours[:read_back], "#{label}: the count read back, raw"
    assert_includes 1..61_000, ours[:count_ttl], "#{label}: the count under the store's namespace"
    assert_equal [200, 403, 403, 403], ours[:banned], label
    assert_equal [200, 200, 200, 403], ours[:allowed], label
    assert(ours[:keys].all? { |key| key.start_with?("#{prefix}rack::attack:") }, "#{label}: #{ours[:keys]}")
    assert_empty ours[:left], "#{label}: reset! left keys"
  end

  def test_beneath_every_kind_of_store_rack_attack_works_as_on_its_own
    goblin_kinds = kinds_of_store(ENV.fetch("GOBLIN_TEST_SERVER"))
    stock_kinds = kinds_of_store(ENV.fetch("GOBLIN_TEST_BARE"))
    goblin_kinds.zip(stock_kinds).each do |(label, store, prefix, proxied), (_, stock_store)|
      @redis.flushdb
      calls = %w[goblin.increx incrby expire].to_h { |command| [command, GoblinTest.calls(@redis, command)] }
      Rack::Attack.cache.store = GoblinRedis::RackAttackStore.new(store)
      ours = features(@redis, prefix)
      assert_features(label, prefix, ours)
      # 3 throttled requests, 2 Fail2Ban failures, 2 Allow2Ban ones (the third is banned, uncounted).
      counted = calls.to_h { |command, before| [command, GoblinTest.calls(@redis, command) - before] }
      assert_equal({ "goblin.increx" => 7, "incrby" => 0, "expire" => 0 }, counted, label)
      next unless proxied

      @bare.flushdb
      Rack::Attack.cache.store = stock_store
      stock = features(@bare, prefix)
      # Its own Redis::Store proxy counts outside the namespace it reads in (see below): nil.
      compared = label == "Redis::Store" ? %i[throttled banned allowed] : %i[throttled read_back banned allowed]
      compared.each { |feature| assert_equal stock[feature], ours[feature], label }
    end
  end

  def test_a_redis_store_namespace_holds_the_counts_too
    store = Redis::Store.new(host: @redis.connection[:host], port: @redis.connection[:port], namespace: "app")
    Rack::Attack.cache.store = GoblinRedis::RackAttackStore.new(store)
    Rack::Attack.cache.count("x", 60)
    Rack::Attack.cache.write("ban", 1, 60)
    assert_equal ["app:rack::attack:#{Rack::Attack.cache.last_epoch_time / 60}:x", "app:rack::attack:ban"],
                 @redis.keys("*").sort
    # rack-attack's own proxy sends the count's INCRBY and EXPIRE in a pipeline, outside the
    # Redis::Store's namespace, where its reads, bans and reset! are inside it.
    @bare.flushdb
    Rack::Attack.cache.store = Redis::Store.new(host: @bare.connection[:host], port: @bare.connection[:port],
                                                namespace: "app")
    Rack::Attack.cache.count("x", 60)
    assert_equal ["rack::attack:#{Rack::Attack.cache.last_epoch_time / 60}:x"], @bare.keys("*")
  end

  def test_the_store_given_answers_what_rack_attacks_store_does_not
    address = ENV.fetch("GOBLIN_TEST_SERVER")
    store = Redis::Store.new(host: @redis.connection[:host], port: @redis.connection[:port], namespace: "app")
    Rack::Attack.cache.store = GoblinRedis::RackAttackStore.new(store)
    Rack::Attack.cache.write("ban", 1, 60)
    assert Rack::Attack.cache.store.respond_to?(:flushdb)
    assert_equal ["rack::attack:ban"], Rack::Attack.cache.store.keys("*"), "Redis::Store#keys, in its namespace"
    Rack::Attack.cache.store.flushdb
    assert_empty @redis.keys("*")

    cache = ActiveSupport::Cache::RedisCacheStore.new(url: "redis://#{address}", namespace: "rc")
    Rack::Attack.cache.store = GoblinRedis::RackAttackStore.new(cache)
    Rack::Attack.cache.store.write("rack::attack:ban", 1, expires_in: 60)
    assert Rack::Attack.cache.store.exist?("rack::attack:ban", raw: true), "RedisCacheStore#exist?"
    Rack::Attack.cache.store.clear
    assert_empty @redis.keys("*")
    refute GoblinRedis::RackAttackStore.new(cache).respond_to?(:no_such_method)
    assert_raises(NoMethodError) { GoblinRedis::RackAttackStore.new(cache).no_such_method }
  end

  def test_every_count_is_one_goblin_increx
    store = GoblinRedis::RackAttackStore.new(@redis)
    before = %w[goblin.increx incrby expire multi exec].to_h { |command| [command, GoblinTest.calls(@redis, command)] }

    assert_equal [1, 2, 5], [store.increment("c", 1, expires_in: 60), store.increment("c", 1, expires_in: 60),
                             store.increment("c", 3, expires_in: 60)]

    after = before.to_h { |command, calls| [command, GoblinTest.calls(@redis, command) - calls] }
    assert_equal({ "goblin.increx" => 3, "incrby" => 0, "expire" => 0, "multi" => 0, "exec" => 0 }, after)
    assert_includes 1..60_000, @redis.pttl("c")
  end

  def test_counts_from_many_threads_are_each_counted_once_with_one_window
    pool = ConnectionPool.new(size: 4) { GoblinTest.client }
    store = GoblinRedis::RackAttackStore.new(pool)
    counts = Array.new(8) do
      Thread.new { Array.new(25) { store.increment("shared", 1, expires_in: 60) } }
    end.flat_map(&:value)

    assert_equal (1..200).to_a, counts.sort
    assert_includes 1..60_000, @redis.pttl("shared")
  ensure
    pool&.shutdown(&:close)
  end

  def test_write_and_read_as_rack_attack_calls_them
    store = GoblinRedis::RackAttackStore.new(@redis)
    store.write("ban", 1, expires_in: 2.5)
    store.write("forever", "x")

    assert_equal "1", store.read("ban")
    assert_includes 1..2500, @redis.pttl("ban")
    assert_equal(-1, @redis.pttl("forever"))
    store.delete("ban")
    assert_nil store.read("ban")
  end

  def test_a_server_out_of_reach_fails_open_as_the_stock_store
    kinds_of_store("127.0.0.1:#{free_port}").each do |label, unreachable, _, proxied|
      [(unreachable if proxied), GoblinRedis::RackAttackStore.new(unreachable)].compact.each do |store|
        Rack::Attack.clear_configuration
        Rack::Attack.cache.store = store
        Rack::Attack.throttle("by ip", limit: 1, period: 60, &:ip)

        assert_equal [200, 200, 200], statuses(["/"], ["/"], ["/"]), "#{label}: #{store.class.name}"
      end
    end
  end

  def test_a_server_without_the_module_is_one_clear_error_from_every_method
    kinds_of_store(ENV.fetch("GOBLIN_TEST_BARE")).each do |label, bare, _|
      store = GoblinRedis::RackAttackStore.new(bare)
      [
        -> { store.increment("k", 1, expires_in: 60) }, -> { store.read("k") },
        -> { store.write("k", 1, expires_in: 5) }, -> { store.delete("k") }, -> { store.delete_matched("k*") }
      ].each do |call|
        error = assert_raises(GoblinRedis::ModuleError, label) { call.call }
        assert_match(/loadmodule .*MODULE LOAD/, error.message)
      end
      assert_empty @bare.keys("*"), "#{label}: nothing written"

      Rack::Attack.clear_configuration
      Rack::Attack.cache.store = store
      Rack::Attack.throttle("by ip", limit: 1, period: 60, &:ip)
      assert_raises(GoblinRedis::ModuleError, label) { get "/", {}, "REMOTE_ADDR" => "1.2.3.4" }
    end
  end

  def test_the_module_is_asked_for_once_per_client
    before = GoblinTest.calls(@redis, "module|list")
    client = GoblinTest.client
    store = GoblinRedis::RackAttackStore.new(client)
    5.times { store.increment("k", 1, expires_in: 60) }
    store.read("k")
    assert_equal 1, GoblinTest.calls(@redis, "module|list") - before

    # A failed check is not kept: asked again at the next call.
    bare_before = GoblinTest.calls(@bare, "module|list")
    bare_store = GoblinRedis::RackAttackStore.new(@bare)
    2.times { assert_raises(GoblinRedis::ModuleError) { bare_store.read("k") } }
    assert_equal 2, GoblinTest.calls(@bare, "module|list") - bare_before
    client.close
  end

  def test_arguments_are_checked_where_they_are_given
    assert_raises(TypeError) { GoblinRedis::RackAttackStore.new("redis://localhost") }
    assert_raises(TypeError) { GoblinRedis::RackAttackStore.new(ActiveSupport::Cache::MemoryStore.new) }
    store = GoblinRedis::RackAttackStore.new(@redis)
    [0, -1, 1.5].each do |amount|
      assert_raises(ArgumentError) { store.increment("k", amount, expires_in: 60) }
    end
    assert_nil @redis.get("k")
  end

  private

  def free_port
    server = TCPServer.new("127.0.0.1", 0)
    server.addr[1]
  ensure
    server&.close
  end
end
