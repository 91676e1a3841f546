# frozen_string_literal: true

# The gem's tests (tests/ruby.rs runs them on every server): GOBLIN_TEST_SERVER is a server with
# the module ("127.0.0.1:port"), GOBLIN_TEST_BARE one without it.
require "minitest/autorun"
require "redis"
require "goblin_redis"

# What the tests share: clients of the two servers, commandstats, waiting for an event.
module GoblinTest
  module_function

  def client(address = ENV.fetch("GOBLIN_TEST_SERVER"), **options)
    host, port = address.split(":")
    Redis.new(host:, port: Integer(port), **options)
  end

  def bare(**options)
    client(ENV.fetch("GOBLIN_TEST_BARE"), **options)
  end

  # Calls of `command` (lowercase, as INFO commandstats names it) on the server of `redis`.
  def calls(redis, command)
    Integer(redis.info("commandstats").dig(command, "calls") || 0)
  end

  # Waits until `condition` holds (checked every 10 ms), for at most `seconds`: for events the
  # server reports (a client blocked, a key gone), never for a guess of how long something takes.
  def wait_for(seconds = 10)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + seconds
    until yield
      raise "not within #{seconds} s" if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline

      sleep 0.01
    end
  end

  # Clients blocked on the server (waiters in line).
  def blocked(redis)
    Integer(redis.info("clients")["blocked_clients"])
  end
end

# A test on a flushed server, its client closed after.
class GoblinCase < Minitest::Test
  def setup
    @redis = GoblinTest.client
    @redis.flushdb
  end

  def teardown
    @redis.close
  end
end
