# frozen_string_literal: true

require_relative "test_helper"

# GoblinRedis::Limiter::GCRA and ::FixedWindow: each decision one Goblin command, on the server's
# clock, and its headers.
class LimiterTest < GoblinCase
  def test_gcra_allows_the_burst_then_refuses_until_a_token_comes_back
    limiter = GoblinRedis::Limiter::GCRA.new(@redis, burst: 2, rate: 1, period: 10)
    decisions = Array.new(4) { limiter.call("api:user42") }

    assert_equal [true, true, true, false], decisions.map(&:allowed?)
    assert_equal [2, 1, 0, 0], decisions.map(&:remaining)
    refused = decisions.last
    assert_equal 3, refused.limit
    assert_includes 1..10, refused.retry_after
    assert_equal({ "RateLimit-Limit" => "3", "RateLimit-Remaining" => "0",
                   "RateLimit-Reset" => refused.reset_after.to_s, "Retry-After" => refused.retry_after.to_s },
                 refused.headers)
    refute decisions.first.headers.key?("Retry-After")
  end

  def test_gcra_counts_a_cost_and_a_refusal_takes_nothing
    limiter = GoblinRedis::Limiter::GCRA.new(@redis, burst: 4, rate: 1, period: 60)
    assert limiter.call("k", cost: 3).allowed?
    refute limiter.call("k", cost: 3).allowed?
    assert limiter.call("k", cost: 2).allowed?, "the refused 3 took nothing"
    refute limiter.call("k").allowed?
  end

  def test_fixed_window_counts_to_its_limit_in_a_window_on_the_servers_clock
    limiter = GoblinRedis::Limiter::FixedWindow.new(@redis, limit: 2, period: 60)
    decisions = Array.new(3) { limiter.call("form:1.2.3.4") }

    assert_equal [true, true, false], decisions.map(&:allowed?)
    assert_equal [1, 0, 0], decisions.map(&:remaining)
    assert_includes 1..60, decisions.last.retry_after
    assert_includes 1..60_000, @redis.pttl("form:1.2.3.4")
    assert_equal "3", @redis.get("form:1.2.3.4"), "a refused request is counted too"
  end

  def test_fixed_window_ends_and_counting_starts_again
    limiter = GoblinRedis::Limiter::FixedWindow.new(@redis, limit: 1, period: 0.2)
    assert limiter.call("k", cost: 1).allowed?
    refute limiter.call("k").allowed?
    GoblinTest.wait_for { !@redis.exists?("k") }
    assert limiter.call("k").allowed?
  end

  def test_fixed_window_ends_at_the_millisecond_its_key_expires
    limiter = GoblinRedis::Limiter::FixedWindow.new(@redis, limit: 1, period: 0.05)
    assert limiter.call("edge").allowed?
    refute limiter.call("edge").allowed?
    # The TTL of the refusal's window, read until the server says 0 ms are left (it still holds
    # the key in that millisecond): the window has ended, and the next request is the next one's.
    ttl = @redis.pttl("edge") while ttl.nil? || ttl.positive?
    assert limiter.call("edge").allowed?, "a window that has ended counts no request"
  end

  def test_each_decision_is_one_goblin_command
    before = GoblinTest.calls(@redis, "goblin.gcra") + GoblinTest.calls(@redis, "goblin.fwindow")
    GoblinRedis::Limiter::GCRA.new(@redis, burst: 1, rate: 1, period: 1).call("a")
    GoblinRedis::Limiter::FixedWindow.new(@redis, limit: 1, period: 1).call("b", cost: 2)
    assert_equal 2, GoblinTest.calls(@redis, "goblin.gcra") + GoblinTest.calls(@redis, "goblin.fwindow") - before
  end

  def test_arguments_are_checked_where_they_are_given
    assert_raises(ArgumentError) { GoblinRedis::Limiter::GCRA.new(@redis, burst: -1, rate: 1, period: 1) }
    assert_raises(ArgumentError) { GoblinRedis::Limiter::GCRA.new(@redis, burst: 1, rate: 0, period: 1) }
    assert_raises(ArgumentError) { GoblinRedis::Limiter::GCRA.new(@redis, burst: 1, rate: 1, period: 0) }
    assert_raises(ArgumentError) { GoblinRedis::Limiter::FixedWindow.new(@redis, limit: 0, period: 1) }
    assert_raises(ArgumentError) { GoblinRedis::Limiter::FixedWindow.new(@redis, limit: 1, period: "1") }
    assert_raises(TypeError) { GoblinRedis::Limiter::FixedWindow.new(:redis, limit: 1, period: 1) }
    limiter = GoblinRedis::Limiter::FixedWindow.new(@redis, limit: 1, period: 1)
    assert_raises(ArgumentError) { limiter.call("k", cost: 0) }
  end

  def test_a_server_without_the_module_is_one_clear_error
    bare = GoblinTest.bare
    [GoblinRedis::Limiter::GCRA.new(bare, burst: 1, rate: 1, period: 1),
     GoblinRedis::Limiter::FixedWindow.new(bare, limit: 1, period: 1)].each do |limiter|
      assert_raises(GoblinRedis::ModuleError) { limiter.call("k") }
    end
  ensure
    bare&.close
  end

  def test_a_server_that_refuses_module_list_is_taken_at_its_word
    @redis.call("ACL", "SETUSER", "app", "on", ">secret", "~*", "+@all", "-module")
    app = GoblinTest.client(username: "app", password: "secret")
    assert GoblinRedis::Limiter::GCRA.new(app, burst: 1, rate: 1, period: 1).call("k").allowed?

    bare = GoblinTest.bare
    bare.call("ACL", "SETUSER", "app", "on", ">secret", "~*", "+@all", "-module")
    refused = GoblinTest.bare(username: "app", password: "secret")
    limiter = GoblinRedis::Limiter::GCRA.new(refused, burst: 1, rate: 1, period: 1)
    error = assert_raises(GoblinRedis::ModuleError) { limiter.call("k") }
    assert_match(/no GOBLIN.GCRA/, error.message)
  ensure
    @redis.call("ACL", "DELUSER", "app")
    bare&.call("ACL", "DELUSER", "app")
    [app, bare, refused].each { |client| client&.close }
  end
end
