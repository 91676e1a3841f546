# frozen_string_literal: true

require_relative "test_helper"

# GoblinRedis::Lock: try_lock, waiting in line in arrival order on connections of its own, timeouts,
# leases, renewals, fencing tokens, owner-checked release, and the module check.
class LockTest < GoblinCase
  def lock(**options)
    GoblinRedis::Lock.new(@redis, "report", **options)
  end

  # `count` threads, started one after the other, each in line before the next starts; each
  # records its index once granted, then runs `after`.
  def waiters_in_line(count, timeout: 10, &after)
    granted = Queue.new
    threads = Array.new(count) do |index|
      waiting = GoblinTest.blocked(@redis)
      thread = Thread.new do
        waiter = lock(ttl: 10)
        waiter.lock(timeout:)
        granted << index
        after&.call(waiter)
      end
      GoblinTest.wait_for { GoblinTest.blocked(@redis) == waiting + 1 }
      thread
    end
    [threads, granted]
  end

  def test_try_lock_takes_a_free_lock_only
    holder = lock
    other = lock

    assert holder.try_lock
    refute other.try_lock
    assert_equal holder.token, @redis.get("report")
    assert holder.owned?
    refute other.owned?
    assert other.locked?
  end

  def test_waiters_are_granted_in_the_order_they_came
    holder = lock(ttl: 30)
    holder.lock
    threads, granted = waiters_in_line(3, &:unlock)

    holder.unlock
    threads.each(&:join)
    assert_equal [0, 1, 2], Array.new(3) { granted.pop }
  end

  def test_a_lock_that_must_wait_stalls_none_of_the_applications_commands
    holder = lock(ttl: 30)
    holder.lock
    threads, = waiters_in_line(1, &:unlock)

    # The waiter waits on a connection of its own: the application's client answers at once.
    assert_equal "PONG", @redis.ping
    assert_equal 1, GoblinTest.blocked(@redis)
    holder.unlock
    threads.each(&:join)
  end

  def test_a_wait_ends_at_its_timeout_and_leaves_the_lock_alone
    holder = lock(ttl: 30)
    holder.lock
    # The waiter's connection is a dup of its client, with the same name (CLIENT SETNAME).
    name = "timeout-#{SecureRandom.hex(4)}"
    app = GoblinTest.client(id: name)
    named = -> { @redis.call("CLIENT", "LIST").lines.count { |line| line.include?(" name=#{name} ") } }
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)

    assert_raises(GoblinRedis::LockTimeoutError) { GoblinRedis::Lock.new(app, "report").lock(timeout: 0.3) }
    assert_operator Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, :>=, 0.3
    assert_equal holder.token, @redis.get("report")
    # The waiter's connection is closed after its wait: the application's alone is left.
    GoblinTest.wait_for { named.call == 1 }
  ensure
    app&.close
  end

  def test_a_lease_that_runs_out_hands_the_lock_to_the_next_in_line
    holder = lock(ttl: 0.3)
    holder.lock
    waiter = lock(ttl: 10)

    waiter.lock(timeout: 10)
    assert_equal waiter.token, @redis.get("report")
    refute holder.owned?
    assert_raises(GoblinRedis::LockLostError) { holder.unlock }
    assert_equal waiter.token, @redis.get("report"), "the old holder's unlock leaves it alone"
    assert_operator waiter.fencing_token, :>, 0
  end

  def test_a_wait_is_sent_in_slices_shorter_than_the_waiters_read_timeout
    holder = lock(ttl: 1.2)
    holder.lock
    before = GoblinTest.calls(@redis, "goblin.block")
    wait_on = GoblinTest.client(read_timeout: 0.4)
    waiter = lock(wait_on:)

    waiter.lock(timeout: 10)
    assert_equal waiter.token, @redis.get("report")
    assert_operator GoblinTest.calls(@redis, "goblin.block") - before, :>=, 2
  ensure
    wait_on&.close
  end

  def test_fencing_tokens_grow_with_every_grant_and_a_renewal_keeps_its_own
    first = lock
    first.lock
    token = first.fencing_token
    first.renew(ttl: 5)
    assert_equal token, first.fencing_token
    assert_includes 1..5000, @redis.pttl("report")
    first.unlock
    assert_nil first.fencing_token

    second = lock
    second.lock
    assert_operator second.fencing_token, :>, token
  end

  def test_a_renewal_of_a_lost_lock_is_an_error
    holder = lock
    holder.lock
    @redis.del("report")

    assert_raises(GoblinRedis::LockLostError) { holder.renew }
    refute holder.owned?
    assert_nil @redis.get("report"), "a renewal never takes the lock back"
  end

  def test_synchronize_releases_whatever_the_block_does
    assert_equal(:done, lock.synchronize { :done })
    assert_nil @redis.get("report")

    assert_raises(RuntimeError) { lock.synchronize { raise "boom" } }
    assert_nil @redis.get("report")

    lock.synchronize do |held|
      assert_equal held.token, @redis.get("report")
      assert_operator held.fencing_token, :>, 0
    end
  end

  def test_without_fencing_no_token_is_kept
    holder = lock(fencing: false)
    holder.lock
    assert_nil holder.fencing_token
    assert_equal holder.token, @redis.get("report")
    holder.renew
    assert_nil holder.fencing_token
  end

  def test_arguments_are_checked_where_they_are_given
    assert_raises(TypeError) { GoblinRedis::Lock.new(nil, "report") }
    [0, -1, "30", nil].each do |ttl|
      assert_raises(ArgumentError) { lock(ttl:) }
    end
    assert_raises(ArgumentError) { lock.renew(ttl: 0) }
  end

  def test_a_server_without_the_module_is_one_clear_error_from_every_method
    bare = GoblinTest.bare
    held = GoblinRedis::Lock.new(bare, "report")
    %i[try_lock lock unlock renew locked?].each do |method|
      error = assert_raises(GoblinRedis::ModuleError, method) { held.public_send(method) }
      assert_match(/loadmodule/, error.message)
    end
    assert_nil bare.get("report")
  ensure
    bare&.close
  end
end
